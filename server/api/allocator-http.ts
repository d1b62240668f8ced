import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ApiError } from '../k8s/status.js';
import type { AllocationService } from '../allocation/allocation-service.js';
import { fromAllocationRequest, toAllocationResponse, unallocatedGrpcCode } from '../allocation/allocation-request.js';
import { GrpcCode, SdkError } from '../sidecar/errors.js';

/** Largest AllocationRequest body read. */
export const ALLOCATOR_BODY_LIMIT = 1024 * 1024;

export interface AllocatorHttpOptions {
  /** HTTP status for UnAllocated (Agones's --http-unallocated-status-code, 429 by default). */
  unallocatedStatus?: number;
}

function sendError(res: Response, error: SdkError): void {
  res.status(error.httpStatus).setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(error.toJSON()));
}

/** A resource-API error (422 validation, 400 decoding) in the allocator's gRPC-style body. */
function fromApiError(error: ApiError): SdkError {
  if (error.code === 422 || error.code === 400) return new SdkError(GrpcCode.INVALID_ARGUMENT, error.status.message);
  return new SdkError(GrpcCode.UNKNOWN, error.status.message);
}

/**
 * The allocator service's REST endpoint, `POST /gameserverallocation`: an AllocationRequest in,
 * an AllocationResponse out, Agones's gateway error bodies (`{code, message, details}`); 429
 * when nothing is available, 409 on contention.
 */
export function allocatorRouter(service: AllocationService, options: AllocatorHttpOptions = {}): Router {
  const router = express.Router();
  const unallocated = unallocatedGrpcCode(options.unallocatedStatus ?? 429);
  router.post('/gameserverallocation', express.raw({ type: () => true, limit: ALLOCATOR_BODY_LIMIT }), async (req: Request, res: Response) => {
    try {
      const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      let body: unknown = {};
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text) as unknown;
        } catch (error) {
          throw new SdkError(GrpcCode.INVALID_ARGUMENT, `proto: syntax error: ${(error as Error).message}`);
        }
      }
      const request = fromAllocationRequest(body);
      const gsa = service.prepare(request.metadata?.namespace ?? '', request, false);
      const { status } = await service.allocate(gsa);
      const response = toAllocationResponse(status, service.gates, unallocated);
      res.status(200).setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(response));
    } catch (error) {
      if (error instanceof SdkError) return sendError(res, error);
      if (error instanceof ApiError) return sendError(res, fromApiError(error));
      sendError(res, new SdkError(GrpcCode.UNKNOWN, error instanceof Error ? error.message : String(error)));
    }
  });
  router.all('/gameserverallocation', (_req, res) => sendError(res, new SdkError(GrpcCode.UNIMPLEMENTED, 'Method Not Allowed')));
  router.use((error: Error & { type?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (error.type === 'entity.too.large') {
      return sendError(res, new SdkError(GrpcCode.RESOURCE_EXHAUSTED, `request body too large: the limit is ${ALLOCATOR_BODY_LIMIT} bytes`));
    }
    next(error);
  });
  return router;
}
