/**
 * Why events happened: every commit records what caused it, so `fleetsim explain` can follow a
 * change back, event by event, to the client request or the timer it started from. A cause that
 * follows from an earlier event names that event's sequence number (`after`); the chain ends at a
 * request, a timer or the server's start. Causes are plain JSON and are stored once per commit.
 */

/** An object of the cluster, as a cause names it. */
export interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
}

/** A client's request: the resource API, the allocator, or a game server's SDK call. */
export interface RequestCause {
  type: 'request';
  /** `GET`, `POST`…, or `GRPC` for a gRPC call. */
  method: string;
  /** The URL path and query, or the gRPC method's path. */
  path: string;
  /** The client's address (`host:port`). */
  client: string;
  /** The client's `X-Request-Id`, or one the server gave the request. */
  requestId: string;
}

/** A controller reconciled an object: `after` is the event that queued the work. */
export interface SyncCause {
  type: 'sync';
  /** The controller, by the name of the kind it reconciles (`GameServerSet`, `Fleet`…). */
  controller: string;
  object: ObjectRef;
  after?: number;
  /** What the controller read and decided, in its words (`replicas: 5, had: 10`). */
  inputs?: Record<string, number | string | boolean>;
}

/** A timer of the cluster fell due (a reservation's end, a health deadline, a sync period). */
export interface TimerCause {
  type: 'timer';
  timer: string;
  object?: ObjectRef;
  /** The event that set the timer, when one did. */
  after?: number;
  inputs?: Record<string, number | string | boolean>;
}

/** A FleetAutoscaler's decision, with the figures it decided from. */
export interface AutoscalerCause {
  type: 'autoscaler';
  autoscaler: ObjectRef;
  fleet: string;
  /** The policy that ruled (`Buffer`, `Counter`, `List`, `Webhook`…). */
  policy: string;
  current: number;
  desired: number;
  inputs: Record<string, number | string | boolean>;
  /** What started the decision: the autoscaler's sync timer, or an event (a fleet's change). */
  trigger: TimerCause | { type: 'event'; after: number };
}

/** A game-server process (simulated or real) did something: started, exited, was killed. */
export interface ProcessCause {
  type: 'process';
  object: ObjectRef;
  detail: string;
}

/** The server itself: manifests applied at start, the default fleet, the system namespaces. */
export interface StartupCause {
  type: 'startup';
  detail: string;
}

/**
 * A change seen on a live cluster by `fleetsim record`: the chain of causes ends here, with what
 * the cluster said. Nothing of fleetsim decided it.
 */
export interface ObservedCause {
  type: 'observed';
  /** The kubeconfig's cluster and context recorded from. */
  cluster: string;
  context: string;
  /** The object's resourceVersion on the cluster after the change (for a deletion, the last one known). */
  resourceVersion: string;
  /** When the recorder saw it (RFC 3339), by the cluster's clock when it has one to ask, else the recorder's. */
  observedAt: string;
  /**
   * How it was seen: a watch event, or a list (at the start, after a 410 Gone, after a restart)
   * that found the object new, changed or gone since the last one recorded.
   */
  via: 'watch' | 'list';
  /** What the cluster said beyond the object itself (an allocation's labels and annotations), in words. */
  said?: string;
}

export type Cause = RequestCause | SyncCause | TimerCause | AutoscalerCause | ProcessCause | StartupCause | ObservedCause;

/** A controller (named by the kind it reconciles) reconciling one object of that kind, after event `after`. */
export function syncCause(
  kind: string,
  namespace: string,
  name: string,
  after: number | undefined,
  inputs?: Record<string, number | string | boolean>,
): SyncCause {
  return {
    type: 'sync',
    controller: kind,
    object: { kind, namespace, name },
    ...(after !== undefined && { after }),
    ...(inputs && { inputs }),
  };
}

/** The event sequence number a cause follows from, if any. */
export function causeAfter(cause: Cause): number | undefined {
  switch (cause.type) {
    case 'sync':
    case 'timer':
      return cause.after;
    case 'autoscaler':
      return cause.trigger.after;
    default:
      return undefined;
  }
}

/** Longest path and request id kept: a cause is a note, not a copy of the request. */
const MAX_TEXT = 512;
/** Distinguishes this process's request ids from an earlier run's in the same log. */
const PROCESS_TAG = Date.now().toString(36);
let requestCount = 0;

/**
 * A request's cause: the client's own `X-Request-Id` when it sent one (so a client can find its
 * request in the log), otherwise an id of this process.
 */
export function requestCause(request: { method: string; path: string; client: string; requestId?: string }): RequestCause {
  const given = request.requestId?.trim();
  return {
    type: 'request',
    method: request.method,
    path: request.path.slice(0, MAX_TEXT),
    client: request.client,
    requestId: given ? given.slice(0, MAX_TEXT) : `${PROCESS_TAG}-${++requestCount}`,
  };
}
