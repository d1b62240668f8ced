import { parseAllDocuments } from 'yaml';
import { KIND_DEFINITIONS } from './kinds/definitions.js';
import { apiVersionOf } from './kinds/registry.js';
import { ApiError } from './k8s/status.js';
import { readInputFile, whyUnreadable } from './input-file.js';
import type { ResourceService } from './resources/service.js';
import type { Cause } from './log/cause.js';

/** Reads every document of a YAML (or JSON) manifest file; an error names the file. */
export function readManifests(path: string): unknown[] {
  let text: string;
  try {
    text = readInputFile(path);
  } catch (error) {
    throw new Error(`cannot read ${path}: ${whyUnreadable(error)}`);
  }
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`${path}: ${doc.errors[0]!.message}`);
      return doc.toJSON() as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

/** `kubectl apply` in-process: creates each object, or replaces its spec if it exists; `cause` is recorded (default: applied at start). */
export async function applyManifests(service: ResourceService, documents: unknown[], source: string, cause?: Cause): Promise<string[]> {
  const applied: string[] = [];
  for (const document of documents) {
    const object = document as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
    const definition = KIND_DEFINITIONS.find((d) => d.kind === object.kind && apiVersionOf(d) === object.apiVersion);
    if (!definition) throw new Error(`${source}: no kind ${String(object.kind)} in ${String(object.apiVersion)}`);
    const namespace = object.metadata?.namespace ?? 'default';
    const name = object.metadata?.name ?? '';
    const options = { cause: cause ?? ({ type: 'startup', detail: `applied from ${source} at start` } as const) };
    try {
      const existing = name ? safeGet(service, definition, namespace, name) : undefined;
      if (existing) {
        await service.patch(definition, namespace, name, { spec: (document as { spec?: unknown }).spec ?? null }, 'application/merge-patch+json', options);
        applied.push(`${definition.singular}.${definition.group} "${name}" configured`);
      } else {
        const created = await service.create(definition, namespace, document, options);
        applied.push(`${definition.singular}.${definition.group} "${created.metadata.name}" created`);
      }
    } catch (error) {
      const message = error instanceof ApiError ? error.status.message : (error as Error).message;
      throw new Error(`${source}: ${message}`);
    }
  }
  return applied;
}

function safeGet(service: ResourceService, ...args: Parameters<ResourceService['get']>) {
  try {
    return service.get(...args);
  } catch {
    return undefined;
  }
}

/** The fleet a newcomer sees with no arguments: five simple game servers that become Ready. */
export const DEFAULT_FLEET = {
  apiVersion: 'agones.dev/v1',
  kind: 'Fleet',
  metadata: { name: 'simple-game-server', namespace: 'default' },
  spec: {
    replicas: 5,
    template: {
      spec: {
        ports: [{ name: 'default', containerPort: 7654 }],
        template: {
          spec: {
            containers: [
              { name: 'simple-game-server', image: 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41' },
            ],
          },
        },
      },
    },
  },
};
