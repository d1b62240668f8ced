import { type FieldError, type FieldErrorType, fieldErrorBody, fieldErrorMessage, goQuote } from './validation.js';

/** A Kubernetes `Status` (metav1.Status) for an error answer. */
export interface K8sStatus {
  kind: 'Status';
  apiVersion: 'v1';
  /** Empty, but for a 410 on a list page: the token that continues at the latest state. */
  metadata: { continue?: string };
  status: 'Failure';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ reason: string; message: string; field?: string }>; retryAfterSeconds?: number };
  code: number;
}

/** An error the resource API answers with a Status object. */
export class ApiError extends Error {
  constructor(readonly status: K8sStatus) {
    super(status.message);
  }

  get code(): number {
    return this.status.code;
  }
}

function status(code: number, reason: string, message: string, details?: K8sStatus['details']): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details && { details }), code });
}

// The 422 Invalid Status (apimachinery errors.NewInvalid).

/** Optional members are the ones Go leaves out of the JSON when empty (omitempty). */
export interface StatusCause {
  reason: FieldErrorType;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
}

export interface InvalidStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: 'Invalid';
  details: StatusDetails;
  code: 422;
}

/** One Status cause: the reason is the error type, the message is the body without the field. */
export function statusCause(e: FieldError): StatusCause {
  const cause: StatusCause = { reason: e.type, message: fieldErrorBody(e) };
  if (e.field !== '') cause.field = e.field;
  return cause;
}

/**
 * The message is `<Kind>[.<group>] "<name>" is invalid: <errors>`, where the errors are
 * de-duplicated by full text and bracketed only when more than one distinct text remains.
 * The causes keep every error, duplicates included. Key order matches the Go struct order.
 */
export function invalidStatus(
  kind: string,
  group: string,
  name: string,
  errors: FieldError[],
): InvalidStatus {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const messages = [...new Set(errors.map(fieldErrorMessage))];
  let message = `${qualifiedKind} ${goQuote(name)} is invalid`;
  if (messages.length === 1) message += `: ${messages[0]}`;
  else if (messages.length > 1) message += `: [${messages.join(', ')}]`;

  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  if (kind !== '') details.kind = kind;
  if (errors.length > 0) details.causes = errors.map(statusCause);

  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Invalid',
    details,
    code: 422,
  };
}

/** `fleets.agones.dev`, `secrets` */
function resourceName(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

export const apiErrors = {
  notFound: (plural: string, group: string, name: string) =>
    status(404, 'NotFound', `${resourceName(plural, group)} "${name}" not found`, { name, group: group || undefined, kind: plural }),
  alreadyExists: (plural: string, group: string, name: string) =>
    status(409, 'AlreadyExists', `${resourceName(plural, group)} "${name}" already exists`, { name, group: group || undefined, kind: plural }),
  conflict: (
    plural: string,
    group: string,
    name: string,
    why = 'the object has been modified; please apply your changes to the latest version and try again',
  ) => status(409, 'Conflict', `Operation cannot be fulfilled on ${resourceName(plural, group)} "${name}": ${why}`, { name, group: group || undefined, kind: plural }),
  invalid: (kind: string, group: string, name: string, errors: FieldError[]) => new ApiError(invalidStatus(kind, group, name, errors) as K8sStatus),
  badRequest: (message: string) => status(400, 'BadRequest', message),
  forbidden: (message: string) => status(403, 'Forbidden', message),
  methodNotAllowed: (message = 'the server does not allow this method on the requested resource') =>
    status(405, 'MethodNotAllowed', message),
  unsupportedMediaType: (contentType: string, accepted = ['application/json-patch+json', 'application/merge-patch+json']) =>
    status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}; got ${contentType || 'no Content-Type'}`),
  tooLarge: (limit: number) => status(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  gone: (message: string) => status(410, 'Expired', message),
  /** The API server's ResourceVersionTooLarge: the resourceVersion asked for never arrived. */
  tooLargeResourceVersion: (asked: number, current: number) =>
    status(504, 'Timeout', `Timeout: Too large resource version: ${asked}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  pathNotFound: () => status(404, 'NotFound', 'the server could not find the requested resource'),
  internal: (message: string) => status(500, 'InternalError', `Internal error occurred: ${message}`),
};
