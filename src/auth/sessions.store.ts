// The sessions' rows (`sessions`, one per refresh token) and the facts a token is checked against on every request.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { Tier } from '../db/schema.ts';

/** The session `sid` with its user's token generation and tier: one primary-key look-up. */
export async function sessionWithUser(db: Db, sid: string) {
  return db.get(sql<{ user_id: number; revoked_at: number | null; token_generation: number; tier: Tier }>`SELECT s.user_id, s.revoked_at,
    u.token_generation, u.tier FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.sid = ${sid}`);
}

/** A user's token generation and tier (for a token without a session). */
export async function userTokenState(db: Db, userId: number) {
  return db.get(sql<{ token_generation: number; tier: Tier }>`SELECT token_generation, tier FROM users WHERE id = ${userId}`);
}

/** Adds a session, after dropping those that ended before `expiredBefore` (no token can name them any more). */
export async function insertSession(db: Db, row: { sid: string; user_id: number; created_at: number; expires_at: number }, expiredBefore: number): Promise<void> {
  await db.run(db.qb.deleteFrom('sessions').where('expires_at', '<', expiredBefore));
  await db.run(db.qb.insertInto('sessions').values({ ...row, revoked_at: null }));
}

export async function revokeSessionRow(db: Db, sid: string, now: number): Promise<void> {
  await db.run(db.qb.updateTable('sessions').set({ revoked_at: now }).where('sid', '=', sid).where('revoked_at', 'is', null));
}

/** Revokes every open session of the user; the count of sessions it ended. */
export async function revokeSessionsOfUser(db: Db, userId: number, now: number): Promise<number> {
  return (await db.run(db.qb.updateTable('sessions').set({ revoked_at: now })
    .where('user_id', '=', userId).where('revoked_at', 'is', null))).changes;
}
