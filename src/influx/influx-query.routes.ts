// GET|POST /query: InfluxQL through the engine in src/influxql/, charged through the telemetry cost limiter (contract
// §7.4) before any point is read, answered in InfluxDB's shape. `q` (and db, rp, params, epoch) come from the query
// string or, on POST, from a form body. `chunked=true` streams the answer as InfluxDB does, one JSON object a line
// (chunked.ts): the engine answers whole, the lines are cut from its answer and written as the client reads them.
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { AppEnv } from '../http/env.ts';
import { badRequest } from '../http/errors.ts';
import { decodeUtf8, joinBytes, nodeResponse } from '../http/route.ts';
import { estimateRequest } from '../telemetry/cost.ts';
import { enforceQueryCost } from '../rate-limit/query-cost.ts';
import { enforceRetention } from '../telemetry/telemetry.store.ts';
import { parseQuery, ParseError, type Params } from '../influxql/parser.ts';
import { executeQuery } from '../influxql/execute.ts';
import { answerInWorker, answerSent, mayAnswerInWorker } from '../telemetry/read-workers.ts';
import { EPOCH_UNITS } from '../influxql/time.ts';
import { influxAuthenticator, INFLUX_HEADERS, renderInfluxError, searchParams } from './influx-http.ts';
import { answerLines, chunkSizeOf, cutOf } from './chunked.ts';
import { indentJson } from './raw-json.ts';

const TAG = 'influxdb-1.x';
const FORM = /^application\/x-www-form-urlencoded\s*(;.*)?$/i;
/** Lines of a chunked answer are gathered into writes of about this many bytes (a line of one row is ~50 bytes). */
const WRITE_BYTES = 64 * 1024;

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
        + 'pretty, chunked=true and chunk_size (default 10000: one JSON object a line, docs/api.md#influxdb-1x). SELECT and SHOW DATABASES | RETENTION POLICIES | MEASUREMENTS | TAG KEYS | '
        + 'TAG VALUES | FIELD KEYS | SERIES; anything else is that statement\'s error. Only series whose nodeId names a device '
        + 'the caller may read are seen (root members see all). Every SELECT is charged like a JSON query (docs/api.md#cost). '
        + 'Credentials: an API token (scope api or telemetry:read) or an access token, as Bearer, Token, HTTP Basic password or ?p=.',
      auth: influxAuthenticator(ctx, ['api', 'telemetry:read']), looseQuery: true, renderError: renderInfluxError,
      ...(method === 'post' ? { rawBody: { contentTypes: ['application/x-www-form-urlencoded'], description: 'q=…&db=… as a form' } } : {}),
      responses: {
        200: { description: '{ results: [{ statement_id, series: [{ name, tags?, columns, values }] } | { statement_id, error }] }; '
          + 'chunked: one { results: [one result] } a line, series of more than chunk_size rows split, "partial": true on all but the last' },
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
      // InfluxDB reads pretty from the query string only, everything else from a form body too
      const pretty = searchParams(c).get('pretty') === 'true';
      const headers = { 'content-type': 'application/json', ...INFLUX_HEADERS };
      const chunked = params.get('chunked') === 'true';
      if (!chunked && !pretty) {
        nodeResponse(c)?.once('finish', () => answerSent(body));
        return c.body(body, 200, headers);
      }
      const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
      if (!chunked) return c.body(indentJson(text), 200, headers);
      const lines = answerLines(text, statements.map(cutOf), chunkSizeOf(params.get('chunk_size')), pretty);
      return c.body(lineStream(lines, (err) => deps.log.error('influx: a chunked answer was cut short', { requestId: c.var.requestId, error: String(err) })), 200, headers);
    });
  }
}

/**
 * The lines as a byte stream that makes its next write only when the client has taken the previous one. A failure
 * once the head is sent ends the connection without the last chunk: the client sees an incomplete answer.
 */
function lineStream(lines: Iterator<string>, failed: (err: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let batch = '';
      for (let next = step(); ; next = step()) {
        if (next.done) {
          if (batch !== '') controller.enqueue(encoder.encode(batch));
          controller.close();
          return;
        }
        batch += next.value;
        if (batch.length >= WRITE_BYTES) break;
      }
      controller.enqueue(encoder.encode(batch));
    },
    cancel() {
      lines.return?.();
    },
  }, { highWaterMark: 0 });

  function step(): IteratorResult<string> {
    try {
      return lines.next();
    } catch (err) {
      failed(err);
      throw err;
    }
  }
}
