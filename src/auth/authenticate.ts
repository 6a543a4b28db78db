// Authenticators: bearer token -> c.var.actor. Every /v1 and /user route declares one; `requireActor` (access or sudo
// token, or an API token with scope `api`) is the one almost every route uses. The kind of token decides where it is
// accepted: API tokens never reach token, password, 2FA or sudo operations (`requireSession`).
import type { Context } from 'hono';
import { ApiError } from '../http/errors.ts';
import type { Actor, AppEnv, TokenClaims, TokenType } from '../http/env.ts';
import type { Authenticator } from '../http/route.ts';
import type { Deps } from '../context/deps.ts';
import type { Authenticators } from '../context/route-context.ts';
import { bearerToken, verifyToken } from './tokens.ts';
import { verifyApiToken } from './api-token-auth.ts';
import { isApiTokenText, type ApiTokenScope } from './api-tokens.store.ts';

/**
 * The actor of a token taken from a request: an API token (`gk_...`) when `apiScopes` names the scopes accepted here,
 * else a JWT of one of the `accepted` kinds. Throws 401 (or 403 INSUFFICIENT_SCOPE).
 */
export async function actorOfToken(deps: Deps, token: string, accepted: readonly TokenType[], apiScopes: readonly ApiTokenScope[]): Promise<{ actor: Actor; claims?: TokenClaims }> {
  if (isApiTokenText(token)) {
    if (apiScopes.length === 0) throw new ApiError('UNAUTHENTICATED', `an API token is not accepted here (expected ${accepted.join(' or ')})`);
    return { actor: await verifyApiToken(deps, token, apiScopes) };
  }
  const claims = await verifyToken(deps.keys, token, accepted, deps.now());
  const user = await deps.sessions.liveUser(claims);
  if (user === undefined) throw new ApiError('UNAUTHENTICATED', 'token revoked');
  return { actor: { userId: claims.sub, tokenType: claims.typ, issuedAt: claims.iat, tier: user.tier, ...(claims.sid ? { sessionId: claims.sid } : {}) }, claims };
}

async function authenticate(deps: Deps, c: Context<AppEnv>, accepted: readonly TokenType[], apiScopes: readonly ApiTokenScope[] = []): Promise<TokenClaims | undefined> {
  const header = c.req.header('authorization');
  const token = bearerToken(header, true);
  // `Token <jwt>` is InfluxDB's scheme for its own tokens; ours take it only for API tokens
  if (!token || (!isApiTokenText(token) && bearerToken(header) === undefined)) {
    throw new ApiError('UNAUTHENTICATED', 'missing bearer token (Authorization: Bearer <token>)');
  }
  const { actor, claims } = await actorOfToken(deps, token, accepted, apiScopes);
  c.set('actor', actor);
  return claims;
}

export function makeAuthenticators(deps: Deps): Authenticators {
  const actorOr = (scopes: ApiTokenScope[]): Authenticator => ({
    security: 'accessBearerAuth',
    alsoAccepts: ['sudoBearerAuth', 'apiTokenAuth'],
    authenticate: async (c) => { await authenticate(deps, c, ['access', 'sudo'], scopes); },
  });
  return {
    requireActor: actorOr(['api']),
    requireTelemetryWrite: actorOr(['api', 'telemetry:write']),
    requireTelemetryRead: actorOr(['api', 'telemetry:read']),
    requireSession: {
      security: 'accessBearerAuth',
      alsoAccepts: ['sudoBearerAuth'],
      authenticate: async (c) => { await authenticate(deps, c, ['access', 'sudo']); },
    },
    requireSudo: {
      security: 'sudoBearerAuth',
      authenticate: async (c) => {
        const claims = await authenticate(deps, c, ['access', 'sudo']);
        if (claims?.typ !== 'sudo') throw new ApiError('SUDO_REQUIRED', 'this operation needs a sudo token (second factor)');
      },
    },
    requireRefresh: {
      security: 'refreshBearerAuth',
      authenticate: async (c) => { await authenticate(deps, c, ['refresh']); },
    },
    requirePartialOrActor: {
      security: 'accessBearerAuth',
      alsoAccepts: ['partialBearerAuth', 'sudoBearerAuth'],
      authenticate: async (c) => { await authenticate(deps, c, ['partial', 'access', 'sudo']); },
    },
  };
}
