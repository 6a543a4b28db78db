// Password reset tokens (`password_reset_tokens`, stored as hashes) and forgot-password requests
// (`password_reset_requests`, counted per address and per client address).
import type { Db } from '../db/open.ts';

/** Adds a token for the user after dropping the user's earlier ones and every expired one. */
export async function replaceResetToken(db: Db, row: { user_id: number; token_hash: Buffer; created_at: number; expires_at: number }, now: number): Promise<void> {
  await db.run(db.qb.deleteFrom('password_reset_tokens').where((eb) => eb.or([eb('user_id', '=', row.user_id), eb('expires_at', '<=', now)])));
  await db.run(db.qb.insertInto('password_reset_tokens').values({ ...row, used_at: null }));
}

/** The unused, unexpired token with this hash. */
export async function findUsableResetToken(db: Db, tokenHash: Buffer, now: number): Promise<{ id: number; user_id: number } | undefined> {
  return db.get(db.qb.selectFrom('password_reset_tokens').select(['id', 'user_id'])
    .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now));
}

/** Marks every unused token of the user used. */
export async function useResetTokensOf(db: Db, userId: number, now: number): Promise<void> {
  await db.run(db.qb.updateTable('password_reset_tokens').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null));
}

export interface ResetSubject {
  scope: 'email' | 'ip';
  subject: string;
}

/** The time of the latest request of `s` after `since`, or undefined. */
export async function lastResetRequest(db: Db, s: ResetSubject, since: number): Promise<number | undefined> {
  const row = await db.get(db.qb.selectFrom('password_reset_requests').select((eb) => eb.fn.max('at').as('at'))
    .where('scope', '=', s.scope).where('subject', '=', s.subject).where('at', '>', since));
  return row?.at ?? undefined;
}

/** Records requests of `subjects` at `now`, after dropping those at or before `forgetUntil`. */
export async function insertResetRequests(db: Db, subjects: readonly ResetSubject[], now: number, forgetUntil: number): Promise<void> {
  await db.run(db.qb.deleteFrom('password_reset_requests').where('at', '<=', forgetUntil));
  for (const s of subjects) await db.run(db.qb.insertInto('password_reset_requests').values({ ...s, at: now }));
}
