// Two-factor state: the TOTP secret (pending and active), the last accepted time step, and the recovery codes.
import type { Db } from '../db/open.ts';
import type { TwoFactorTable } from '../db/schema.ts';
import { protectRecoveryCode, type StoredRecoveryCode } from './recovery-codes.ts';

export type TwoFactorRow = TwoFactorTable;

export function getTwoFactor(db: Db, userId: number): TwoFactorRow | undefined {
  return db.get(db.qb.selectFrom('two_factor').selectAll().where('user_id', '=', userId));
}

export function isTwoFactorEnabled(db: Db, userId: number): boolean {
  return getTwoFactor(db, userId)?.totp_secret != null;
}

/** Setup: remember a new secret until a first code for it arrives (the active one, if any, keeps working until then). */
export function setPendingSecret(db: Db, userId: number, secret: string, now: number): void {
  db.run(db.qb.insertInto('two_factor')
    .values({
      user_id: userId, totp_secret: null, totp_enabled_at: null, totp_last_step: null,
      pending_secret: secret, pending_at: now, recovery_codes_at: null,
    })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ pending_secret: secret, pending_at: now })));
}

/** Enable: the pending secret becomes the active one; `step` (the code just shown) cannot be used again. */
export function activatePendingSecret(db: Db, userId: number, secret: string, step: number, now: number): void {
  db.run(db.qb.updateTable('two_factor')
    .set({ totp_secret: secret, totp_enabled_at: now, totp_last_step: step, pending_secret: null, pending_at: null })
    .where('user_id', '=', userId));
}

/**
 * Records `step` as accepted, only if it is later than every step accepted before. False means the code was already
 * used (or an older one was): the replay is refused. Conditional UPDATE, so it holds even against a racing request.
 */
export function acceptTotpStep(db: Db, userId: number, step: number): boolean {
  return db.run(db.qb.updateTable('two_factor').set({ totp_last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))).changes === 1;
}

/** Switches 2FA off: secret, pending secret and recovery codes go. */
export function deleteTwoFactor(db: Db, userId: number): void {
  db.tx(() => {
    db.run(db.qb.deleteFrom('recovery_codes').where('user_id', '=', userId));
    db.run(db.qb.deleteFrom('two_factor').where('user_id', '=', userId));
  });
}

/** Replaces the user's recovery codes (old ones void) with hashes of `codes`. */
export function replaceRecoveryCodes(db: Db, userId: number, codes: readonly string[], now: number): void {
  db.tx(() => {
    db.run(db.qb.deleteFrom('recovery_codes').where('user_id', '=', userId));
    db.run(db.qb.insertInto('recovery_codes')
      .values(codes.map((code) => ({ user_id: userId, ...protectRecoveryCode(code), used_at: null }))));
    db.run(db.qb.updateTable('two_factor').set({ recovery_codes_at: now }).where('user_id', '=', userId));
  });
}

export function unusedRecoveryCodes(db: Db, userId: number): StoredRecoveryCode[] {
  return db.all(db.qb.selectFrom('recovery_codes').select(['id', 'hash_key', 'code_hash'])
    .where('user_id', '=', userId).where('used_at', 'is', null).orderBy('id'));
}

export function countRecoveryCodes(db: Db, userId: number): { total: number; remaining: number } {
  const row = db.get(db.qb.selectFrom('recovery_codes')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.count<number>('id').filterWhere('used_at', 'is', null).as('remaining'),
    ])
    .where('user_id', '=', userId));
  return { total: Number(row?.total ?? 0), remaining: Number(row?.remaining ?? 0) };
}

/** Spends a code: true when it was still unused (a racing request that spent it first makes this false). */
export function spendRecoveryCode(db: Db, id: number, now: number): boolean {
  return db.run(db.qb.updateTable('recovery_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null)).changes === 1;
}
