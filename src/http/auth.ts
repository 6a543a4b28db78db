// Authenticators: bearer token -> c.var.actor. Every /v1 and /user route declares one; `requireActor` (access or sudo)
// is the one almost every route uses. The kind of token decides where it is accepted.
import type { Context } from 'hono';
import { ApiError } from './errors.ts';
import type { AppEnv, TokenType } from './env.ts';
import type { Authenticator } from './route.ts';
import { bearerToken, verifyToken, type TokenClaims } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';

async function authenticate(deps: Deps, c: Context<AppEnv>, accepted: readonly TokenType[]): Promise<TokenClaims> {
  const token = bearerToken(c.req.header('authorization'));
  if (!token) throw new ApiError('UNAUTHENTICATED', 'missing bearer token (Authorization: Bearer <token>)');
  const claims = await verifyToken(deps.keys, token, accepted, deps.now());
  if (deps.sessions.isRevoked(claims)) throw new ApiError('UNAUTHENTICATED', 'token revoked');
  c.set('actor', { userId: claims.sub, tokenType: claims.typ, issuedAt: claims.iat, ...(claims.sid ? { sessionId: claims.sid } : {}) });
  return claims;
}

export interface Authenticators {
  /** access or sudo token (a sudo token is accepted wherever an access token is) */
  requireActor: Authenticator;
  /** sudo token only; a plain access token gets 403 SUDO_REQUIRED */
  requireSudo: Authenticator;
  requireRefresh: Authenticator;
  /** partial (2FA login) or access/sudo token */
  requirePartialOrActor: Authenticator;
}

export function makeAuthenticators(deps: Deps): Authenticators {
  return {
    requireActor: {
      security: 'accessBearerAuth',
      alsoAccepts: ['sudoBearerAuth'],
      authenticate: async (c) => { await authenticate(deps, c, ['access', 'sudo']); },
    },
    requireSudo: {
      security: 'sudoBearerAuth',
      authenticate: async (c) => {
        const claims = await authenticate(deps, c, ['access', 'sudo']);
        if (claims.typ !== 'sudo') throw new ApiError('SUDO_REQUIRED', 'this operation needs a sudo token (second factor)');
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
