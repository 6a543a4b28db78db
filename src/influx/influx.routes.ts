// The InfluxDB 1.x door: GET|HEAD /ping, POST /write, GET|POST /query at the root, as InfluxDB serves them,
// so Grafana, Telegraf, the `influx` shell and the client libraries work unchanged — with gridkeeper's rights, costs
// and bucket in force. Writes go through the telemetry write path (src/telemetry/ingest.ts); queries through the
// InfluxQL engine built on the telemetry query layer (src/influxql/).
import type { RouteContext } from '../context/route-context.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { decodeUtf8Lines } from '../http/route.ts';
import type { Precision } from '../telemetry/line-protocol/line-scanner.ts';
import { decodeContentEncoding } from '../telemetry/line-protocol/gunzip.ts';
import { writeLineProtocol } from '../telemetry/ingest.ts';
import { enforceRetention } from '../telemetry/telemetry.store.ts';
import { MAX_NAME_BYTES } from '../telemetry/namespaces.ts';
import { WRITE_BODY_LIMIT } from '../telemetry/telemetry.routes.ts';
import { influxAuthenticator, INFLUX_HEADERS, renderInfluxError, searchParams } from './influx-http.ts';
import { registerInfluxQueryRoutes } from './influx-query.routes.ts';

const TAG = 'influxdb-1.x';

/** InfluxDB's precision names; `n`, `u` and `µ` are its short forms. */
const PRECISIONS: Record<string, Precision> = { n: 'ns', ns: 'ns', u: 'us', us: 'us', 'µ': 'us', ms: 'ms', s: 's', m: 'm', h: 'h' };
/** A line without a timestamp is stored at the time of the write cut to the precision, as InfluxDB does (ms at best). */
const PRECISION_MS: Record<Precision, number> = { ns: 1, us: 1, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function registerInfluxRoutes(ctx: RouteContext): void {
  const { api, deps } = ctx;
  const { db } = deps;

  // HEAD /ping too: Hono answers HEAD with the GET route, without a body.
  api.route({
    method: 'get', path: '/ping', tag: TAG, summary: 'InfluxDB 1.x health check (GET or HEAD)',
    description: 'Answers 204 with X-Influxdb-Version (clients check the major version) and X-Influxdb-Build. No credentials needed.',
    looseQuery: true, renderError: renderInfluxError,
    responses: { 204: { description: 'up' } },
  }, (c) => c.body(null, 204, INFLUX_HEADERS));

  api.route({
    method: 'post', path: '/write', tag: TAG, summary: 'InfluxDB 1.x write (line protocol)',
    description: 'Namespace (db, rp); rp defaults to autogen. precision ns (default), u, ms, s, m or h. Same storage, rights and '
      + 'all-or-nothing rule as POST /v1/telemetry: every line needs a nodeId tag naming a device the caller may write. '
      + 'Credentials: an API token (scope api or telemetry:write) or an access token, as Bearer, Token, HTTP Basic password or ?p=. '
      + 'Errors in InfluxDB\'s shape { "error": "..." }: 400 unable to parse, 401 authorization failed, 403, 413.',
    auth: influxAuthenticator(ctx, ['api', 'telemetry:write']), looseQuery: true, bodyLimit: WRITE_BODY_LIMIT,
    rawBody: { contentTypes: ['text/plain'], description: 'InfluxDB line protocol, one point per line' },
    renderError: renderInfluxError,
    responses: { 204: { description: 'every point was stored' } },
  }, async (c, { raw }) => {
    const params = searchParams(c);
    const database = params.get('db') ?? '';
    if (database === '') throw badRequest('database is required');
    const precisionName = params.get('precision') || 'ns';
    const precision = PRECISIONS[precisionName];
    if (precision === undefined) throw badRequest(`invalid precision ${JSON.stringify(precisionName)} (expected n, ns, u, ms, s, m or h)`);
    const retentionPolicy = params.get('rp') || 'autogen';
    for (const [what, name] of [['database', database], ['retention policy', retentionPolicy]]) {
      if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw badRequest(`${what} name is longer than ${MAX_NAME_BYTES} bytes`);
    }
    const bytes = decodeContentEncoding(raw ?? [], c.req.header('content-encoding'), WRITE_BODY_LIMIT);
    const now = deps.now();
    const retainFromMs = await enforceRetention(db, deps.config.telemetryRetention, now);
    try {
      const written = {
        userId: c.var.actor.userId, namespace: { version: '1' as const, database, retentionPolicy },
        body: decodeUtf8Lines(bytes), precision, now: now - (now % PRECISION_MS[precision]), retainFromMs,
        observe: deps.alarms.observe({ version: '1', database, retentionPolicy }),
      };
      const stored = await writeLineProtocol(db, written);
      deps.alarms.written(written); // alarm evaluation: queued, off the request path (src/alarms/engine.ts)
      deps.metrics.telemetryPointsWritten.inc(stored);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'LINE_PROTOCOL') throw new ApiError('LINE_PROTOCOL', `unable to parse ${err.message}`);
      throw err;
    }
    return c.body(null, 204, INFLUX_HEADERS);
  });

  registerInfluxQueryRoutes(ctx);
}
