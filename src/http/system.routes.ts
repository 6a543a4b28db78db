// Operational endpoints: health, metrics, the OpenAPI document and the offline reference page. No token needed.
import * as v from 'valibot';
import type { Db } from '../db/open.ts';
import { ping } from '../db/operations.ts';
import type { Api } from './route.ts';
import type { Metrics } from './metrics.ts';
import { buildOpenApi } from './openapi.ts';
import { asApiError } from './database-errors.ts';
import { ApiError } from './errors.ts';
import docsHtml from './docs.html';
import { htmlPolicy } from './security-headers.ts';

const DOCS_POLICY = htmlPolicy(docsHtml);

const Health = v.object({
  status: v.literal('ok'), version: v.string(),
  backend: v.pipe(v.picklist(['sqlite', 'postgres']), v.description('the storage backend (ours): the embedded SQLite database, or PostgreSQL')),
  database: v.pipe(v.literal('reachable'), v.description('the database answered a statement just now (otherwise: 503 DATABASE_UNAVAILABLE, with backend and database: "unreachable")')),
});

export function registerSystemRoutes({ api, deps }: { api: Api; deps: { db: Db; metrics: Metrics; version: string } }): void {
  api.route({
    method: 'get', path: '/healthz', tag: 'operations', summary: 'Liveness: the process serves and its database answers',
    responses: { 200: { description: 'healthy', schema: Health }, 503: { description: 'DATABASE_UNAVAILABLE: the database cannot be reached' } },
  }, async (c) => {
    try {
      await ping(deps.db);
    } catch (err) {
      const answer = asApiError(err);
      if (answer instanceof ApiError) Object.assign(answer.extra, { backend: deps.db.backend, database: 'unreachable' });
      throw answer;
    }
    return c.json({ status: 'ok' as const, version: deps.version, backend: deps.db.backend, database: 'reachable' as const });
  });

  api.route({
    method: 'get', path: '/metrics', tag: 'operations', summary: 'Prometheus metrics',
    responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain; version=0.0.4' } },
  }, async (c) => {
    const text = await deps.metrics.registry.metrics();
    return c.body(text, 200, { 'Content-Type': deps.metrics.registry.contentType });
  });

  let document: string | undefined;
  api.route({
    method: 'get', path: '/openapi.json', tag: 'operations', summary: 'This API as an OpenAPI 3.1 document',
    responses: { 200: { description: 'OpenAPI document' } },
  }, (c) => {
    // Routes are all registered before the first request, so the document is built once.
    document ??= JSON.stringify(buildOpenApi(api.specs, deps.version));
    return c.body(document, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });

  api.route({
    method: 'get', path: '/docs', tag: 'operations', summary: 'Browsable API reference (works offline)',
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  }, (c) => {
    c.header('Content-Security-Policy', DOCS_POLICY);
    // the page is the same until the next version: a browser may keep it briefly
    c.header('Cache-Control', 'public, max-age=300');
    return c.html(docsHtml);
  });
}
