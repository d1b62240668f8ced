import type { Request, Response } from 'express';
import { KIND_DEFINITIONS } from '../../kinds/definitions.js';
import { CRD_DEFINITION, crdOf } from '../../kinds/customresourcedefinition/definition.js';
import { NAMESPACE_KIND } from '../../kinds/namespace/namespace.js';
import { rfc3339 } from '../../kinds/meta.js';
import { matchesSelector } from '../../kinds/label-selector.js';
import type { Resource } from '../../kinds/resource.js';
import { apiErrors } from '../../k8s/status.js';
import type { CrdsPort } from './ports.js';
import { selectorOf, sendJson, wantsTable } from '../responses.js';
import { listOptionsOf } from '../request-options.js';
import { toTable } from './table.js';

/**
 * `apiextensions.k8s.io/v1` CustomResourceDefinitions: the ones Agones installs, read-only
 * (kubectl lists them to tell a custom resource from a built-in or aggregated kind).
 */
export function serveCustomResourceDefinitions(cluster: CrdsPort, name: string | undefined, subresource: string | undefined, req: Request, res: Response): void {
  if (subresource !== undefined) throw apiErrors.pathNotFound();
  if (req.method !== 'GET') throw apiErrors.methodNotAllowed('customresourcedefinitions are installed with fleetsim: they cannot be changed');
  if (listOptionsOf(req.query).watch) throw apiErrors.methodNotAllowed('customresourcedefinitions cannot be watched: they never change');
  // Installed with the cluster: as old as its `default` namespace.
  const installed = cluster.get(NAMESPACE_KIND, '', 'default')?.metadata.creationTimestamp ?? rfc3339(cluster.clock.now());
  const crds = KIND_DEFINITIONS.filter((d) => d.customResource).map((d) => crdOf(d, installed));
  const now = cluster.clock.now();
  const includeObject = req.query.includeObject as string;
  if (name !== undefined) {
    const crd = crds.find((c) => c.metadata.name === name);
    if (!crd) throw apiErrors.notFound(CRD_DEFINITION.plural, CRD_DEFINITION.group, name);
    return sendJson(res, 200, wantsTable(req) ? toTable(CRD_DEFINITION, [crd], now, { includeObject }) : crd);
  }
  const selector = selectorOf(req);
  const items = crds.filter((c: Resource) => !selector || matchesSelector(selector, c.metadata.labels));
  const metadata = { resourceVersion: String(cluster.resourceVersion) };
  if (wantsTable(req)) return sendJson(res, 200, { ...toTable(CRD_DEFINITION, items, now, { includeObject }), metadata });
  sendJson(res, 200, { apiVersion: 'apiextensions.k8s.io/v1', kind: CRD_DEFINITION.listKind, metadata, items });
}
