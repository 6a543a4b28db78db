// What every request gets, in one middleware: its id (X-Request-Id), the headers every answer carries
// (security-headers.ts), one log line (at debug for a successful poll of /healthz or /metrics) and the request metrics.
//
// Served by @hono/node-server, the fixed headers go straight onto the Node response (setHeader) before anything else
// runs. Node merges them with those of the answer when it writes the head, and the answer's own win, so a route can
// still set its own Cache-Control or Content-Security-Policy. Set through Hono (c.header), they would make every answer
// carry a WHATWG Headers object, which @hono/node-server then copies into a plain one. An answer without such a
// Headers object goes out on its fast path, which matters for small answers such as /healthz. Without a Node response (app.request in tests and scripts), they are set through Hono.
//
// The metrics keep one labelled child per (method, route, status): prom-client hashes the label object on every
// inc() and observe() otherwise. Routes are patterns and statuses few, so the children stay few.
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from './metrics.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import { nodeResponse } from './route.ts';

/** Routes polled by monitors: logged at debug when they succeed. */
const POLLED = new Set(['/healthz', '/metrics']);

/** An incoming X-Request-Id that is echoed: word characters, '-', '=' and '.', at most 128 (else a new UUID). */
const WELL_FORMED_ID = /^[\w.=-]{1,128}$/;

type Child = { inc(): void };
type TimedChild = { observe(seconds: number): void };

export function requestFrame(deps: { metrics: Metrics; log: Logger }): MiddlewareHandler<AppEnv> {
  const counted = new Map<string, Child>();
  const timed = new Map<string, TimedChild>();
  const { requests, latency } = deps.metrics;

  function count(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let t = timed.get(key);
    if (t === undefined) timed.set(key, t = latency.labels({ method, route }));
    t.observe(seconds);
    const full = `${key} ${status}`;
    let r = counted.get(full);
    if (r === undefined) counted.set(full, r = requests.labels({ method, route, status: String(status) }));
    r.inc();
  }

  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const id = incoming !== undefined && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    const outgoing = nodeResponse(c);
    if (outgoing !== undefined) {
      for (const [name, value] of SECURITY_HEADERS) outgoing.setHeader(name, value);
      outgoing.setHeader('X-Request-Id', id);
    } else {
      for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
      c.header('X-Request-Id', id);
    }
    await next();
    const route = c.get('routePattern') ?? 'unmatched';
    const seconds = (performance.now() - started) / 1000;
    count(c.req.method, route, c.res.status, seconds);
    // Health checks and metric scrapes come every few seconds (the console's Operations page, Prometheus): at info
    // they would fill the journal, and a gateway's SD card, with lines that say nothing. Their failures still show.
    const polled = c.res.status < 400 && POLLED.has(route);
    deps.log[polled ? 'debug' : 'info']('request', {
      requestId: id, method: c.req.method, route, path: c.req.path, status: c.res.status,
      ms: Math.round(seconds * 10000) / 10, userId: c.get('actor')?.userId,
    });
  };
}
