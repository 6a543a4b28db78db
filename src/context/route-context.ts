// What every domain's register*Routes function receives. Apart from boot/app.ts (which imports every route file) so
// that route files import nothing that imports them back.
import type { Api, Authenticator } from '../http/route.ts';
import type { Deps } from './deps.ts';

/** The ways a route may authenticate its caller (made by src/auth/authenticate.ts); a route names one as `auth`. */
export interface Authenticators {
  /** access or sudo token (a sudo token is accepted wherever an access token is), or an API token with scope `api` */
  requireActor: Authenticator;
  /** access or sudo token only: token, password and 2FA operations never take an API token */
  requireSession: Authenticator;
  /** sudo token only; a plain access token gets 403 SUDO_REQUIRED */
  requireSudo: Authenticator;
  requireRefresh: Authenticator;
  /** partial (2FA login) or access/sudo token */
  requirePartialOrActor: Authenticator;
  /** telemetry writes: access/sudo token, or an API token with scope `api` or `telemetry:write` */
  requireTelemetryWrite: Authenticator;
  /** telemetry queries: access/sudo token, or an API token with scope `api` or `telemetry:read` */
  requireTelemetryRead: Authenticator;
}

export interface RouteContext {
  api: Api;
  deps: Deps;
  auth: Authenticators;
}
