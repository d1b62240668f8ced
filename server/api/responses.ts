import type { Request, Response } from 'express';
import { ApiError, apiErrors } from '../k8s/status.js';
import { type LabelSelector, parseFieldSelector, parseLabelSelector } from '../kinds/label-selector.js';
import { stringifyJsonExact } from '../log/json.js';
import { queryText } from './request-options.js';

/** Reading a resource request's options and writing its answers, as the API server does. */

export function wantsTable(req: Request): boolean {
  return (req.headers.accept ?? '').includes('as=Table');
}

export function sendJson(res: Response, status: number, body: unknown): void {
  res.status(status).type('application/json').send(stringifyJsonExact(body));
}

export function sendError(res: Response, error: unknown): void {
  const apiError =
    error instanceof ApiError ? error : apiErrors.internal(error instanceof Error ? error.message : String(error));
  sendJson(res, apiError.code, apiError.status);
}

export function fieldFilterOf(req: Request, kind: string): ((object: object) => boolean) | undefined {
  const text = queryText(req.query, 'fieldSelector');
  return text ? parseFieldSelector(text, kind) : undefined;
}

export function selectorOf(req: Request): LabelSelector | undefined {
  const text = queryText(req.query, 'labelSelector');
  return text ? parseLabelSelector(text) : undefined;
}
