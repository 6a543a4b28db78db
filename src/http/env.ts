// Types of the per-request context shared by middleware and routes.
import type { Tier } from '../auth/users.store.ts';
export type TokenType = 'refresh' | 'access' | 'partial' | 'sudo';

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
