import { definitionOfKind } from '../kinds/definitions.js';
import type { KindDefinition } from '../kinds/registry.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';

/**
 * A controller's write as the API request Agones's controller would make for it, for
 * `agones_k8s_client_http_request_*` (client-go's metrics, which Agones exports and its Grafana
 * dashboards chart). fleetsim's controllers commit to the store in-process, so each event they
 * commit is counted as that request: a new object a POST to its collection, a change a PUT (a
 * status a PUT of `/status`), a deletion a DELETE, the endpoint a path template without namespace
 * or name, as client-go labels it. Reads (informers' lists and watches) are not counted: the
 * controllers read the read model, not the API.
 */
export interface ControllerRequest {
  verb: 'POST' | 'PUT' | 'DELETE';
  endpoint: string;
  statusCode: '200' | '201';
  /** How many requests the event stands for (a set's batch of new GameServers: one each). */
  count: number;
}

/** Causes that are a controller's doing (what Agones's controller process would have written). */
export function isControllerWrite(cause: Cause | undefined): boolean {
  return cause?.type === 'sync' || cause?.type === 'autoscaler';
}

/** The requests a kind's writes are, made once per kind (a GameServer's state changes are many). */
interface KindRequests {
  create: ControllerRequest;
  update: ControllerRequest;
  updateStatus: ControllerRequest;
  delete: ControllerRequest;
}

const requestsByKind = new Map<string, KindRequests | null>();

function requestsOf(kind: string): KindRequests | null {
  let requests = requestsByKind.get(kind);
  if (requests === undefined) {
    const definition = definitionOfKind(kind);
    requests = definition ? kindRequests(definition) : null;
    requestsByKind.set(kind, requests);
  }
  return requests;
}

function kindRequests(definition: KindDefinition): KindRequests {
  const root = definition.group ? `/apis/${definition.group}/${definition.version}` : `/api/${definition.version}`;
  const collection = `${root}${definition.namespaced ? '/namespaces/{namespace}' : ''}/${definition.plural}`;
  return {
    create: { verb: 'POST', endpoint: collection, statusCode: '201', count: 1 },
    update: { verb: 'PUT', endpoint: `${collection}/{name}`, statusCode: '200', count: 1 },
    updateStatus: { verb: 'PUT', endpoint: `${collection}/{name}/status`, statusCode: '200', count: 1 },
    delete: { verb: 'DELETE', endpoint: `${collection}/{name}`, statusCode: '200', count: 1 },
  };
}

export function controllerRequestOf(event: NewEvent): ControllerRequest | undefined {
  const requests = requestsOf(event.kind);
  if (!requests) return undefined;
  switch (event.type) {
    case 'GameServerCreated':
    case 'ResourceCreated':
      return requests.create;
    case 'GameServersCreated': {
      const { members, objects } = event.payload as { members?: unknown[]; objects?: unknown[] };
      return { ...requests.create, count: (members ?? objects ?? []).length };
    }
    case 'GameServerDeleted':
    case 'ResourceDeleted':
      return requests.delete;
    case 'ResourceStatusSet':
      return requests.updateStatus;
    default:
      // Every other change of an object (a GameServer's state, metadata, counters…): an update.
      return requests.update;
  }
}
