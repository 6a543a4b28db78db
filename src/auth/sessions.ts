// Sessions and revocation. Every refresh token opens a session (a `sessions` row keyed by the token's `sid`); the
// access and sudo tokens minted from it carry the same sid. A token with a sid is valid only while its row exists, is
// not revoked and belongs to the token's user — one primary-key lookup per request, in the database, so logout and
// password changes survive restarts and take effect on the next request.
//
// Every token also carries the user's token generation (`gen`); a password change increments it in the same unit of work
// that revokes the sessions, so every token issued before the change is refused — exactly: no clock comparison, so a
// token issued in the same second or millisecond as the change is refused too. Tokens without a sid are only ever
// partial tokens (a login waiting for its second factor) — and tokens minted directly by tests.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/open.ts';
import type { SessionGuard } from '../context/deps.ts';
import type { TokenClaims } from '../http/env.ts';
import type { Tier } from '../db/schema.ts';
import { TOKEN_LIFETIME } from './tokens.ts';
import { insertSession, revokeSessionRow, revokeSessionsOfUser, sessionWithUser, userTokenState } from './sessions.store.ts';

/** Derived tokens (access 10 min, sudo 5 min) may outlive their refresh token; keep its row well past that. */
const KEEP_AFTER_EXPIRY_MS = 60 * 60 * 1000;

/** Work done inside the unit of work of a session change (the audit entry of a login or logout), with its handle. */
export type InUnit = (tx: Db) => Promise<void>;

export function createSessionGuard(db: Db): SessionGuard {
  return {
    async liveUser(claims: TokenClaims): Promise<{ tier: Tier } | undefined> {
      if (claims.sid !== undefined) {
        const row = await sessionWithUser(db, claims.sid);
        return !row || row.revoked_at !== null || row.user_id !== claims.sub || row.token_generation !== claims.gen ? undefined : { tier: row.tier };
      }
      // a refresh token always opens a session; one without is not ours to honour
      if (claims.typ === 'refresh') return undefined;
      const user = await userTokenState(db, claims.sub);
      return !user || user.token_generation !== claims.gen ? undefined : { tier: user.tier };
    },
  };
}

/** Opens a session for a new refresh token; resolves to its sid once committed. Also drops rows no token can name any more. */
export async function openSession(db: Db, userId: number, now: number, inUnit?: InUnit): Promise<string> {
  const sid = randomBytes(16).toString('base64url');
  return db.write(async (tx) => {
    await inUnit?.(tx); // the audit entry of the login, committed with the session
    await insertSession(tx, { sid, user_id: userId, created_at: now, expires_at: now + TOKEN_LIFETIME.refresh * 1000 }, now - KEEP_AFTER_EXPIRY_MS);
    return sid;
  });
}

/** Logout: the session's refresh token and every token minted from it stop working (committed when this resolves). */
export async function revokeSession(db: Db, sid: string, now: number, inUnit?: InUnit): Promise<void> {
  await db.write(async (tx) => {
    await inUnit?.(tx); // the audit entry of the logout, committed with it
    await revokeSessionRow(tx, sid, now);
  });
}

/** Password change: every session of the user ends. */
export async function revokeUserSessions(db: Db, userId: number, now: number): Promise<number> {
  return revokeSessionsOfUser(db, userId, now);
}
