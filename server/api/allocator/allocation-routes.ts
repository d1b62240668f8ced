import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AllocationService } from '../../allocation/allocation-service.js';
import { unallocatedGrpcCode } from '../../allocation/allocation-request.js';
import { ApiError, apiErrors } from '../../k8s/status.js';
import { GrpcCode, GrpcError, allocatorErrorOf } from '../../grpc-status.js';
import { API_BODY_LIMIT, parseJsonBody, parseRequestText, readBody, sendJsonText } from '../request-body.js';
import { checkBodyMediaType, fieldValidationOf } from '../request-options.js';
import { stringifyJsonExact } from '../../log/json.js';
import { httpRequestCause } from '../request-cause.js';

/** Largest AllocationRequest body read by the allocator endpoint. */
export const ALLOCATOR_BODY_LIMIT = 1024 * 1024;

export interface AllocationRoutesOptions {
  /** Also serve the resource API's `POST .../gameserverallocations` (the main listener does). */
  resourceApi?: boolean;
  /** HTTP status for UnAllocated (Agones's --http-unallocated-status-code, 429 by default). */
  unallocatedStatus?: number;
  /**
   * Refuse allocation here (403, in each route's format) with this message: the allocator asks
   * for client certificates on its TLS port, and this listener has none to check.
   */
  refusal?: () => string;
}

/** Takes the request when it is one of its routes; false hands it on (to Express). */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const ALLOCATOR_PATH = /^\/gameserverallocation\/?$/i;
/** Paths under the allocator's own: unknown to it, answered in its format rather than handed on. */
const UNDER_ALLOCATOR_PATH = /^\/gameserverallocation\//i;
const RESOURCE_API_PATH = /^\/apis\/allocation\.agones\.dev\/v1\/(?:namespaces\/([^/]+)\/)?gameserverallocations\/?$/i;

function sendSdkError(res: ServerResponse, error: GrpcError, close = false): void {
  sendJsonText(res, error.httpStatus, stringifyJsonExact(error.toJSON()), close);
}

function sendApiError(res: ServerResponse, error: unknown, close = false): void {
  const apiError = error instanceof ApiError ? error : apiErrors.internal(error instanceof Error ? error.message : String(error));
  sendJsonText(res, apiError.code, stringifyJsonExact(apiError.status), close);
}

/**
 * The two ways in to allocation, served straight from Node's request (no Express routing: these
 * are the routes a load test or a matchmaker hits thousands of times a second):
 *
 *  - the allocator service's REST endpoint, `POST /gameserverallocation`: an AllocationRequest in,
 *    an AllocationResponse out, Agones's gateway error bodies (`{code, message, details}`); 429
 *    when nothing is available, 409 on contention;
 *  - with `resourceApi`, `POST /apis/allocation.agones.dev/v1/namespaces/{ns}/gameserverallocations`:
 *    a GameServerAllocation in, 201 with it and its status out. Other methods on that path are
 *    left to the resource API, which refuses them.
 */
export function allocationRoutes(service: AllocationService, options: AllocationRoutesOptions = {}): RouteHandler {
  const unallocated = unallocatedGrpcCode(options.unallocatedStatus ?? 429);

  const allocator = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req, ALLOCATOR_BODY_LIMIT);
    if (!body) {
      const message = `request body too large: the limit is ${ALLOCATOR_BODY_LIMIT} bytes`;
      return sendSdkError(res, new GrpcError(GrpcCode.RESOURCE_EXHAUSTED, message), true);
    }
    const text = body.toString('utf8');
    // The gateway's reading of a body (an empty one is an empty request), depth-capped.
    const received = { via: 'allocator-rest', body: text, read: () => parseJsonBody(text) } as const;
    const response = await service.allocateRequest(received, unallocated, httpRequestCause(req));
    // Strings and plain numbers only (64-bit counts are strings here): the built-in writer is exact.
    sendJsonText(res, 200, JSON.stringify(response));
  };

  const resourceApi = async (req: IncomingMessage, res: ServerResponse, encodedNamespace: string | undefined, query: string): Promise<void> => {
    // No namespace in the path: the allocation service defaults it.
    let namespace = '';
    if (encodedNamespace !== undefined) {
      try {
        namespace = decodeURIComponent(encodedNamespace);
      } catch {
        throw apiErrors.badRequest(`the namespace in the path is not valid percent-encoding: ${encodedNamespace}`);
      }
    }
    // A body in a format the API does not read (a cross-site form or text/plain post) is a 415.
    checkBodyMediaType('POST', req.headers['content-type'], { protobuf: false });
    // Strict and Warn refuse unknown fields in an allocation; Ignore drops them.
    const strict = fieldValidationOf(new URLSearchParams(query).get('fieldValidation') ?? undefined) !== 'Ignore';
    const body = await readBody(req, API_BODY_LIMIT);
    if (!body) return sendApiError(res, apiErrors.tooLarge(API_BODY_LIMIT), true);
    const text = body.toString('utf8');
    const contentType = req.headers['content-type'];
    const received = { via: 'resource-api', namespace, strict, contentType, body: text, read: () => parseRequestText(text, contentType) } as const;
    sendJsonText(res, 201, stringifyJsonExact(await service.createReceived(received, httpRequestCause(req))));
  };

  return function route(req, res) {
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    if (ALLOCATOR_PATH.test(path)) {
      if (req.method !== 'POST') sendSdkError(res, new GrpcError(GrpcCode.UNIMPLEMENTED, 'Method Not Allowed'));
      else if (options.refusal) sendSdkError(res, new GrpcError(GrpcCode.PERMISSION_DENIED, options.refusal()));
      else allocator(req, res).catch((error: unknown) => sendSdkError(res, allocatorErrorOf(error)));
      return true;
    }
    if (UNDER_ALLOCATOR_PATH.test(path)) {
      sendSdkError(res, new GrpcError(GrpcCode.NOT_FOUND, 'Not Found'));
      return true;
    }
    if (!options.resourceApi || req.method !== 'POST') return false;
    const match = RESOURCE_API_PATH.exec(path);
    if (!match) return false;
    if (options.refusal) sendApiError(res, apiErrors.forbidden(options.refusal()));
    else resourceApi(req, res, match[1], mark < 0 ? '' : url.slice(mark + 1)).catch((error: unknown) => sendApiError(res, error));
    return true;
  };
}
