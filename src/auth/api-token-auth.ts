// Verifies an API token for one request: known hash, not expired, one of the accepted scopes.
// Used by the authenticators in src/http/auth.ts and by the InfluxDB 1.x endpoints (which take it from more places).
import type { Deps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';
import type { Actor } from '../http/env.ts';
import {
  findApiTokenByHash, hashApiToken, LAST_USED_RESOLUTION_MS, touchApiToken, type ApiTokenScope,
} from './api-tokens.store.ts';

/**
 * The actor of a valid API token holding one of `scopes`; 401 for an unknown, deleted or expired token, 403
 * INSUFFICIENT_SCOPE for a valid token without any accepted scope. The lookup is by the SHA-256 of the secret: the
 * secret itself is never compared, so there is no timing oracle on it.
 */
export async function verifyApiToken(deps: Deps, token: string, scopes: readonly ApiTokenScope[]): Promise<Actor> {
  const now = deps.now();
  const row = await findApiTokenByHash(deps.db, hashApiToken(token));
  if (row === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid token');
  if (row.expires_at !== null && row.expires_at <= now) throw new ApiError('UNAUTHENTICATED', 'token expired');
  if (!row.scopes.some((s) => scopes.includes(s))) {
    throw new ApiError('INSUFFICIENT_SCOPE', `this API token lacks the scope this operation needs (${scopes.join(' or ')}); it has ${row.scopes.join(', ')}`);
  }
  if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
    // at most once a minute per token, in the next group commit
    await deps.db.write((tx) => touchApiToken(tx, row.id, now));
  }
  return { userId: row.user_id, tokenType: 'api', issuedAt: Math.floor(row.created_at / 1000), apiTokenId: row.id, tier: row.tier };
}
