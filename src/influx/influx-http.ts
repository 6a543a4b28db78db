// What the InfluxDB 1.x endpoints share: the version headers clients check, InfluxDB's error shape `{ "error": "…" }`,
// and the credentials InfluxDB clients send (Bearer / Token header, HTTP Basic, ?u=&p=), resolved by the same
// authenticators as every other route.
import type { Context } from 'hono';
import type { Deps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';
import type { AppEnv } from '../http/env.ts';
import { actorOfToken } from '../auth/authenticate.ts';
import type { ApiTokenScope } from '../auth/api-tokens.store.ts';
import type { Authenticator } from '../http/route.ts';
import type { RouteContext } from '../context/route-context.ts';

/** Clients check the major version; 1.8 is the last 1.x line. */
export const INFLUX_VERSION = '1.8.10';
export const INFLUX_HEADERS = { 'X-Influxdb-Version': INFLUX_VERSION, 'X-Influxdb-Build': 'OSS' } as const;

export function influxJson(c: Context<AppEnv>, body: unknown, status: 200 | 400 | 401 | 403 | 404 | 413 | 415 | 422 | 429 | 500 = 200): Response {
  return c.body(JSON.stringify(body), status, { 'content-type': 'application/json', ...INFLUX_HEADERS });
}

/** An ApiError as InfluxDB would answer it: same status and headers, body `{ "error": "…" }`. */
export function renderInfluxError(c: Context<AppEnv>, err: ApiError): Response {
  for (const [k, val] of Object.entries(err.headers)) c.header(k, val);
  const message = err.status === 401 ? `authorization failed: ${err.message}` : err.message;
  return influxJson(c, { error: message }, err.status as 400);
}

/** The credential of an InfluxDB request, in InfluxDB's order: ?p=, then the Authorization header. */
function credential(c: Context<AppEnv>, params: URLSearchParams): string | undefined {
  const p = params.get('p');
  if (p !== null && p !== '') return p;
  const header = c.req.header('authorization');
  if (header === undefined) return undefined;
  const m = /^(Bearer|Token|Basic)[ ]+(\S+)\s*$/i.exec(header);
  if (m === null) return undefined;
  if (m[1].toLowerCase() !== 'basic') return m[2];
  // HTTP Basic: the user name is anything, the password is the token
  const decoded = Buffer.from(m[2], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** Sets c.var.actor from an API token with one of `scopes`, or a JWT access/sudo token; 401/403 otherwise. */
export async function authenticateInflux(deps: Deps, c: Context<AppEnv>, params: URLSearchParams, scopes: ApiTokenScope[]): Promise<void> {
  const token = credential(c, params);
  if (token === undefined || token === '') throw new ApiError('UNAUTHENTICATED', 'no credentials (send an API token as Bearer, Token, Basic password or ?p=)');
  const { actor } = await actorOfToken(deps, token, ['access', 'sudo'], scopes);
  c.set('actor', actor);
}

/** The request's query string as URLSearchParams (repeated keys: the first counts, as in InfluxDB). */
export function searchParams(c: Context<AppEnv>): URLSearchParams {
  const url = c.req.url;
  const q = url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
}

export function influxAuthenticator(ctx: RouteContext, scopes: ApiTokenScope[]): Authenticator {
  return {
    security: 'apiTokenAuth',
    alsoAccepts: ['accessBearerAuth'],
    authenticate: (c) => authenticateInflux(ctx.deps, c, searchParams(c), scopes),
  };
}
