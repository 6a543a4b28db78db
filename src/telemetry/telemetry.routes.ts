// Telemetry (docs/api.md#telemetry): line-protocol writes, batched queries, the namespace list.
// Authorization is by each line's / query's nodeId tag, so it happens inside the services (ingest.ts, query-exec.ts)
// through the rules in authorize.ts — once per distinct nodeId per request.
import type { RouteContext } from '../context/route-context.ts';
import { badRequest } from '../http/errors.ts';
import { decodeUtf8Lines, nodeResponse } from '../http/route.ts';
import { decodeContentEncoding } from './line-protocol/gunzip.ts';
import { writeLineProtocol } from './ingest.ts';
import { namespaceFromWriteParams } from './namespaces.ts';
import { runQueries } from './execute.ts';
import { resultsJson } from './query/result.ts';
import { estimateRequest } from './cost.ts';
import { answerInWorker, answerSent, mayAnswerInWorker } from './read-workers.ts';
import { enforceQueryCost } from '../rate-limit/query-cost.ts';
import { enforceRetention, listVisibleNamespaces } from './telemetry.store.ts';
import {
  NamespacesResponseSchema, QueryBodySchema, QueryParamsSchema, QueryResponseSchema, WriteParamsSchema,
} from './telemetry.schemas.ts';

const TAG = 'telemetry';
/** Telemetry write bodies, before and after gzip decompression (docs/api.md#bodies). */
export const WRITE_BODY_LIMIT = 32 * 1024 * 1024;

export function registerTelemetryRoutes(ctx: RouteContext): void {
  const { api, deps, auth } = ctx;
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/telemetry', tag: TAG, summary: 'Write points in InfluxDB line protocol',
    description: 'Namespace from ?db=&rp= (rp defaults to autogen), ?org=&bucket= or ?namespace=; precision ns (default), us, ms or s. '
      + 'Every line needs a nodeId tag naming a device on which the caller has monitorManagement or may edit nodeInfluxSeries. '
      + 'All-or-nothing: a malformed line -> 400 LINE_PROTOCOL ("line N: ..."), an unauthorized nodeId -> 403, and nothing is stored. '
      + 'Re-writing a (series, time) overwrites the fields given. A field keeps its first type (another type is a 400). '
      + 'With a retention setting, points older than it are accepted but not stored. '
      + 'Content-Encoding: gzip is accepted; 32 MiB at most, also after decompression. InfluxDB parameters u, p, consistency and orgID are ignored.',
    auth: auth.requireTelemetryWrite, query: WriteParamsSchema, bodyLimit: WRITE_BODY_LIMIT,
    rawBody: { contentTypes: ['text/plain'], description: 'InfluxDB line protocol, one point per line' },
    responses: { 204: { description: 'every point was stored' } },
  }, async (c, { query, raw }) => {
    const userId = c.var.actor.userId;
    // Decompressed only for an authenticated caller: nobody else gets to make the server inflate anything.
    const bytes = decodeContentEncoding(raw ?? [], c.req.header('content-encoding'), WRITE_BODY_LIMIT);
    const target = namespaceFromWriteParams(query);
    if (!target.ok) throw badRequest(`query: ${target.message}`);
    const now = deps.now();
    const retainFromMs = await enforceRetention(db, deps.config.telemetryRetention, now);
    const observe = deps.alarms.observe(target.namespace);
    const written = { userId, namespace: target.namespace, body: decodeUtf8Lines(bytes), precision: query.precision, now, retainFromMs, observe };
    const stored = await writeLineProtocol(db, written);
    deps.alarms.written(written); // alarm evaluation: queued, off the request path (src/alarms/engine.ts)
    deps.metrics.telemetryPointsWritten.inc(stored);
    return c.body(null, 204);
  });

  api.route({
    method: 'post', path: '/v1/telemetry/query', tag: TAG, summary: 'Query points: one query or a batch of up to 1000',
    description: 'Each query is answered alone, in request order: { statement_id, series } or { statement_id } when nothing matched '
      + 'or { statement_id, error } (Unauthorized when where.tags.nodeId names no device the caller may read, or a bad field). '
      + 'One series per tag set; limit and orderBy apply per series; functions give one row per series timed at the range start. '
      + 'A single query (not an array) is answered with a single object.',
    auth: auth.requireTelemetryRead, query: QueryParamsSchema, body: QueryBodySchema,
    responses: {
      200: { description: 'results in request order (with ?dryRun=true: { cost, estimatedDatapoints, scannedShards, remainingCapacity })', schema: QueryResponseSchema },
      422: { description: 'COST_EXCEEDS_CAPACITY: the cost is above the bucket capacity of the tier' },
      429: { description: 'RATE_LIMITED: the bucket is too full (Retry-After), or IP_BANNED' },
    },
  }, async (c, { body, query }) => {
    const userId = c.var.actor.userId;
    const now = deps.now();
    // docs/api.md#rate-limit: charged (or refused) before anything executes; a dry run charges nothing and stops here.
    const estimate = estimateRequest(body, now);
    const dryRun = await enforceQueryCost(c, deps, estimate, query);
    if (dryRun) return c.json(dryRun);
    await enforceRetention(db, deps.config.telemetryRetention, now);
    // a heavy request is answered off the event loop (docs/api.md#telemetry-blocks)
    const elsewhere = mayAnswerInWorker(db) ? await answerInWorker(db, estimate.estimatedDatapoints, { kind: 'json', userId, body, nowMs: now }) : undefined;
    if (elsewhere !== undefined) {
      nodeResponse(c)?.once('finish', () => answerSent(elsewhere));
      return c.body(elsewhere, 200, { 'content-type': 'application/json' });
    }
    const results = await runQueries(db, userId, body, now);
    return c.body(resultsJson(results, !Array.isArray(body)), 200, { 'content-type': 'application/json' });
  });

  api.route({
    method: 'get', path: '/v1/telemetry/namespaces', tag: TAG, summary: 'Namespaces with their interval, shard duration and worst-case range',
    description: 'The namespaces holding data of a device the caller may read. Figures in seconds (see docs/api.md#namespaces).',
    auth: auth.requireActor,
    responses: { 200: { description: 'namespaces', schema: NamespacesResponseSchema } },
  }, async (c) => {
    const rows = await listVisibleNamespaces(db, c.var.actor.userId);
    return c.json({
      namespaces: rows.map((r) => ({
        namespace: r.namespace,
        expectedIntervalSeconds: r.intervalMs / 1000,
        shardDurationSeconds: r.shardDurationMs / 1000,
        worstCaseRangeSeconds: r.worstCaseRangeMs / 1000,
        shards: r.shards,
        oldestShardStart: r.oldestShardStartMs === null ? null : new Date(r.oldestShardStartMs).toISOString(),
        createdAt: new Date(r.createdAt).toISOString(),
      })),
    });
  });
}
