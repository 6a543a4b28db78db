// GET|POST /query: InfluxQL through the engine in src/influxql/, charged through the telemetry cost limiter (contract
// §7.4) before any point is read, answered in InfluxDB's shape. `q` (and db, rp, params, epoch) come from the query
// string or, on POST, from a form body. `chunked=true` is answered with one un-chunked JSON document, which chunk-reading
// clients read as a single chunk.
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { AppEnv } from '../http/env.ts';
import { badRequest } from '../http/errors.ts';
import { decodeUtf8, joinBytes } from '../http/route.ts';
import { estimateRequest } from '../telemetry/cost.ts';
import { enforceQueryCost } from '../rate-limit/query-cost.ts';
import { enforceRetention } from '../telemetry/telemetry.store.ts';
import { parseQuery, ParseError, type Params } from '../influxql/parser.ts';
import { executeQuery } from '../influxql/execute.ts';
import { answerInWorker, mayAnswerInWorker } from '../telemetry/read-workers.ts';
import { EPOCH_UNITS } from '../influxql/time.ts';
import { influxAuthenticator, INFLUX_HEADERS, renderInfluxError } from './influx-http.ts';

const TAG = 'influxdb-1.x';
const FORM = /^application\/x-www-form-urlencoded\s*(;.*)?$/i;

/** The request's parameters: the query string, overridden by a form body (as Go's FormValue reads them). */
function requestParams(c: Context<AppEnv>, raw: Uint8Array[] | undefined): URLSearchParams {
  const url = c.req.url;
  const at = url.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  const type = c.req.header('content-type') ?? '';
  if (raw !== undefined && raw.length > 0 && FORM.test(type.trim())) {
    for (const [k, v] of new URLSearchParams(decodeUtf8(joinBytes(raw)))) params.set(k, v);
  }
  return params;
}

export function registerInfluxQueryRoutes(ctx: RouteContext): void {
  const { api, deps } = ctx;
  const { db } = deps;

  for (const method of ['get', 'post'] as const) {
    api.route({
      method, path: '/query', tag: TAG, summary: `InfluxDB 1.x query (InfluxQL)${method === 'post' ? ', q also as a form body' : ''}`,
      description: 'Parameters: q (statements separated by ;), db, rp, epoch (ns|u|µ|ms|s|m|h), params (JSON of bound $parameters), '
        + 'pretty, chunked (answered un-chunked). SELECT and SHOW DATABASES | RETENTION POLICIES | MEASUREMENTS | TAG KEYS | '
        + 'TAG VALUES | FIELD KEYS | SERIES; anything else is that statement\'s error. Only series whose nodeId names a device '
        + 'the caller may read are seen (root members see all). Every SELECT is charged like a JSON query (docs/api.md#cost). '
        + 'Credentials: an API token (scope api or telemetry:read) or an access token, as Bearer, Token, HTTP Basic password or ?p=.',
      auth: influxAuthenticator(ctx, ['api', 'telemetry:read']), looseQuery: true, renderError: renderInfluxError,
      ...(method === 'post' ? { rawBody: { contentTypes: ['application/x-www-form-urlencoded'], description: 'q=…&db=… as a form' } } : {}),
      responses: {
        200: { description: '{ results: [{ statement_id, series: [{ name, tags?, columns, values }] } | { statement_id, error }] }' },
        400: { description: '{ error: "error parsing query: …" }' },
        429: { description: '{ error } with Retry-After: the telemetry bucket is too full' },
      },
    }, async (c, { raw }) => {
      const params = requestParams(c, raw);
      const q = params.get('q') ?? '';
      if (q.trim() === '') throw badRequest('missing required parameter "q"');
      const epoch = params.get('epoch') || undefined;
      if (epoch !== undefined && EPOCH_UNITS[epoch] === undefined) throw badRequest(`invalid epoch ${JSON.stringify(epoch)} (expected ns, u, µ, ms, s, m or h)`);
      let bound: Params = {};
      const paramsText = params.get('params');
      if (paramsText) {
        try {
          const parsed = JSON.parse(paramsText) as unknown;
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
          bound = parsed as Params;
        } catch {
          throw badRequest('error parsing query parameters: expected a JSON object');
        }
      }
      let statements;
      try {
        statements = parseQuery(q, bound);
      } catch (err) {
        if (err instanceof ParseError) throw badRequest(`error parsing query: ${err.message}`);
        throw err;
      }
      const now = deps.now();
      await enforceRetention(db, deps.config.telemetryRetention, now);
      const request = {
        userId: c.var.actor.userId, nowMs: now,
        database: params.get('db') || undefined, retentionPolicy: params.get('rp') || undefined,
      };
      const body = await executeQuery(db, request, statements, {
        epoch,
        charge: async (cost) => { await enforceQueryCost(c, deps, estimateRequest(cost, now), {}); },
        // a heavy request is answered off the event loop (docs/api.md#telemetry-blocks)
        ...(mayAnswerInWorker(db) ? {
          offload: (cost) => answerInWorker(db, estimateRequest(cost, now).estimatedDatapoints, { kind: 'influxql', request, statements, epoch }),
        } : {}),
      });
      // pretty: re-indented (epoch=ns times above 2^53 lose their last digits there, as in any JSON reader)
      if (params.get('pretty') === 'true') {
        const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
        return c.body(JSON.stringify(JSON.parse(text), null, 4), 200, { 'content-type': 'application/json', ...INFLUX_HEADERS });
      }
      return c.body(body, 200, { 'content-type': 'application/json', ...INFLUX_HEADERS });
    });
  }
}
