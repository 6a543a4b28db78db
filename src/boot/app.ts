// createApp(deps): request id, one log line per request, metrics, the one error renderer, and every domain's routes.
import { Hono, type Context } from 'hono';
import { ApiError, errorBody } from '../http/errors.ts';
import { asApiError } from '../http/database-errors.ts';
import { Api } from '../http/route.ts';
import { makeAuthenticators } from '../auth/authenticate.ts';
import type { RouteContext } from '../context/route-context.ts';
import { requestFrame } from '../http/request-frame.ts';
import type { AppEnv } from '../http/env.ts';
import type { Deps } from '../context/deps.ts';
import { registerSystemRoutes } from '../http/system.routes.ts';
import { registerAuthRoutes } from '../auth/auth.routes.ts';
import { registerExplainRoutes } from '../roles/explain.routes.ts';
import { registerRoleRoutes } from '../roles/roles.routes.ts';
import { registerDeviceRoutes } from '../devices/devices.routes.ts';
import { registerLicenseRoutes } from '../licenses/licenses.routes.ts';
import { registerCustomerRoutes } from '../licenses/customers.routes.ts';
import { registerTelemetryRoutes } from '../telemetry/telemetry.routes.ts';
import { registerAssetRoutes } from '../assets/assets.routes.ts';
import { registerInfluxRoutes } from '../influx/influx.routes.ts';
import { registerConsoleRoutes } from '../console/console.routes.ts';
import { registerAuditRoutes } from '../audit/audit.routes.ts';
import { registerEventRoutes } from '../events/events.routes.ts';
import { registerAlarmRoutes } from '../alarms/alarms.routes.ts';

export function createApp(deps: Deps): { app: Hono<AppEnv>; api: Api } {
  const app = new Hono<AppEnv>();
  const api = new Api(app);
  const ctx: RouteContext = { api, deps, auth: makeAuthenticators(deps) };

  // the request id, the headers every answer carries, the log line and the metrics (request-frame.ts)
  app.use('*', requestFrame(deps));

  app.onError((err, c) => renderError(err, c, deps));
  app.notFound((c) => c.json(errorBody(404, 'NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`), 404));

  registerSystemRoutes(ctx);
  registerAuthRoutes(ctx);
  registerExplainRoutes(ctx);
  registerRoleRoutes(ctx);
  registerDeviceRoutes(ctx);
  registerLicenseRoutes(ctx);
  registerCustomerRoutes(ctx);
  registerTelemetryRoutes(ctx);
  registerAssetRoutes(ctx);
  registerInfluxRoutes(ctx);
  registerConsoleRoutes(ctx);
  registerAuditRoutes(ctx);
  registerEventRoutes(ctx);
  registerAlarmRoutes(ctx);
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
