// Types of the per-request context shared by middleware and routes.
import type { Tier } from '../db/schema.ts';

export type TokenType = 'refresh' | 'access' | 'partial' | 'sudo';

/** What a verified JWT says (src/auth/tokens.ts signs and verifies them). */
export interface TokenClaims {
  typ: TokenType;
  sub: number;
  /** token id */
  jti: string;
  /** the refresh-token session this token descends from */
  sid?: string;
  /** the user's token generation at issue: a password change increments it, voiding every earlier token */
  gen: number;
  /** issued at, Unix seconds */
  iat: number;
  exp: number;
}

/** The authenticated caller. Users hold no rights themselves; src/access resolves what this user may do. */
export interface Actor {
  userId: number;
  /** 'api': a long-lived API token (src/auth/api-tokens.store.ts) */
  tokenType: TokenType | 'api';
  /** issued-at of the presented token, Unix seconds */
  issuedAt: number;
  /** id of the refresh-token session the token descends from (revocation) */
  sessionId?: string;
  /** the API token used, when tokenType is 'api' */
  apiTokenId?: number;
  /** the user's rate-limit tier, as read with the token's check in this request */
  tier?: Tier;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    actor: Actor;
    routePattern: string;
  };
}
