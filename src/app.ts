// createApp(deps): request id, one log line per request, metrics, the one error renderer, and every domain's routes.
import { Hono, type Context } from 'hono';
import { requestId } from 'hono/request-id';
import { randomUUID } from 'node:crypto';
import { ApiError, errorBody } from './http/errors.ts';
import { asApiError } from './http/database-errors.ts';
import { Api } from './http/route.ts';
import { makeAuthenticators } from './http/auth.ts';
import type { RouteContext } from './http/route-context.ts';
import { securityHeaders } from './http/security-headers.ts';
import type { AppEnv } from './http/env.ts';
import type { Deps } from './deps.ts';
import { registerSystemRoutes } from './http/system.routes.ts';
import { registerAuthRoutes } from './auth/auth.routes.ts';
import { registerAccessRoutes } from './access/access.routes.ts';
import { registerRoleRoutes } from './roles/roles.routes.ts';
import { registerDeviceRoutes } from './devices/devices.routes.ts';
import { registerLicenseRoutes } from './licenses/licenses.routes.ts';
import { registerCustomerRoutes } from './customers/customers.routes.ts';
import { registerTelemetryRoutes } from './telemetry/telemetry.routes.ts';
import { registerAssetRoutes } from './assets/assets.routes.ts';
import { registerInfluxRoutes } from './influx/influx.routes.ts';
import { registerConsoleRoutes } from './console/console.routes.ts';
import { registerAuditRoutes } from './audit/audit.routes.ts';

const DOTTED_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function createApp(deps: Deps): { app: Hono<AppEnv>; api: Api } {
  const app = new Hono<AppEnv>();
  const api = new Api(app);
  const ctx: RouteContext = { api, deps, auth: makeAuthenticators(deps) };

  // Echoes a well-formed X-Request-Id (word characters, '-' and '=', at most 128; also '.', which Hono's own check
  // refuses), otherwise a new UUID. It sets the header before next(): touching c.res.headers afterwards would force
  // @hono/node-server to materialise a full Response object (measured: ~3x slower /healthz).
  app.use('*', requestId({ limitLength: 128, generator: (c) => {
    const incoming = c.req.header('x-request-id');
    return incoming && DOTTED_ID.test(incoming) ? incoming : randomUUID();
  } }));
  app.use('*', securityHeaders());
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    const route = c.get('routePattern') ?? 'unmatched';
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.requests.inc({ method: c.req.method, route, status: String(c.res.status) });
    deps.metrics.latency.observe({ method: c.req.method, route }, seconds);
    deps.log.info('request', {
      requestId: c.get('requestId'), method: c.req.method, route, path: c.req.path, status: c.res.status,
      ms: Math.round(seconds * 10000) / 10, userId: c.get('actor')?.userId,
    });
  });

  app.onError((err, c) => renderError(err, c, deps));
  app.notFound((c) => c.json(errorBody(404, 'NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`), 404));

  registerSystemRoutes(ctx);
  registerAuthRoutes(ctx);
  registerAccessRoutes(ctx);
  registerRoleRoutes(ctx);
  registerDeviceRoutes(ctx);
  registerLicenseRoutes(ctx);
  registerCustomerRoutes(ctx);
  registerTelemetryRoutes(ctx);
  registerAssetRoutes(ctx);
  registerInfluxRoutes(ctx);
  registerConsoleRoutes(ctx);
  registerAuditRoutes(ctx);
  return { app, api };
}

function renderError(thrown: Error, c: Context<AppEnv>, deps: Deps): Response {
  const err = asApiError(thrown) as Error;
  if (err instanceof ApiError) {
    for (const [k, val] of Object.entries(err.headers)) c.header(k, val);
    return c.json(err.toBody(), err.status);
  }
  // Never echo an internal message: it can carry SQL, paths or secrets. The request id ties the log line to the client.
  deps.log.error('unhandled error', { requestId: c.get('requestId'), route: c.get('routePattern'), error: err.stack ?? String(err) });
  return c.json(errorBody(500, 'INTERNAL', `internal error (request id ${c.get('requestId')})`), 500);
}
