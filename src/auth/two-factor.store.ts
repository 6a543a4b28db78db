// Two-factor state: the TOTP secret (pending and active, sealed at rest: secret-box.ts), the last accepted time step,
// and the recovery codes.
import type { Db } from '../db/open.ts';
import { isSealed, sealedKeyId, SealError, type SecretBox } from '../lib/secret-box.ts';
import type { TwoFactorTable } from '../db/schema.ts';
import { protectRecoveryCode, type StoredRecoveryCode } from './recovery-codes.ts';

export type TwoFactorRow = TwoFactorTable;

export async function getTwoFactor(db: Db, userId: number): Promise<TwoFactorRow | undefined> {
  return db.get(db.qb.selectFrom('two_factor').selectAll().where('user_id', '=', userId));
}

export async function isTwoFactorEnabled(db: Db, userId: number): Promise<boolean> {
  return (await getTwoFactor(db, userId))?.totp_secret != null;
}

/** A sealed TOTP secret is bound to its user's row. */
const placeOf = (userId: number) => `totp:${userId}`;

/** The clear TOTP secret of a stored (sealed) value. */
export function openTotpSecret(box: SecretBox, userId: number, stored: string): string {
  return box.open(stored, placeOf(userId));
}

/** Setup: remember a new secret until a first code for it arrives (the active one, if any, keeps working until then). */
export async function setPendingSecret(db: Db, box: SecretBox, userId: number, clear: string, now: number): Promise<void> {
  const secret = box.seal(clear, placeOf(userId));
  await db.run(db.qb.insertInto('two_factor')
    .values({
      user_id: userId, totp_secret: null, totp_enabled_at: null, totp_last_step: null,
      pending_secret: secret, pending_at: now, recovery_codes_at: null,
    })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ pending_secret: secret, pending_at: now })));
}

/** Enable: the pending secret becomes the active one; `step` (the code just shown) cannot be used again. */
export async function activatePendingSecret(db: Db, box: SecretBox, userId: number, clear: string, step: number, now: number): Promise<void> {
  const secret = box.seal(clear, placeOf(userId));
  await db.run(db.qb.updateTable('two_factor')
    .set({ totp_secret: secret, totp_enabled_at: now, totp_last_step: step, pending_secret: null, pending_at: null })
    .where('user_id', '=', userId));
}

/**
 * Records `step` as accepted, only if it is later than every step accepted before. False means the code was already
 * used (or an older one was): the replay is refused. Conditional UPDATE, so it holds even against a racing request.
 */
export async function acceptTotpStep(db: Db, userId: number, step: number): Promise<boolean> {
  return (await db.run(db.qb.updateTable('two_factor').set({ totp_last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)])))).changes === 1;
}

/** Switches 2FA off: secret, pending secret and recovery codes go. */
export async function deleteTwoFactor(db: Db, userId: number): Promise<void> {
  await db.tx(async (tx) => {
    await tx.run(tx.qb.deleteFrom('recovery_codes').where('user_id', '=', userId));
    await tx.run(tx.qb.deleteFrom('two_factor').where('user_id', '=', userId));
  });
}

/** Replaces the user's recovery codes (old ones void) with hashes of `codes`. */
export async function replaceRecoveryCodes(db: Db, userId: number, codes: readonly string[], now: number): Promise<void> {
  await db.tx(async (tx) => {
    await tx.run(tx.qb.deleteFrom('recovery_codes').where('user_id', '=', userId));
    await tx.run(tx.qb.insertInto('recovery_codes')
      .values(codes.map((code) => ({ user_id: userId, ...protectRecoveryCode(code), used_at: null }))));
    await tx.run(tx.qb.updateTable('two_factor').set({ recovery_codes_at: now }).where('user_id', '=', userId));
  });
}

export async function unusedRecoveryCodes(db: Db, userId: number): Promise<StoredRecoveryCode[]> {
  return db.all(db.qb.selectFrom('recovery_codes').select(['id', 'hash_key', 'code_hash'])
    .where('user_id', '=', userId).where('used_at', 'is', null).orderBy('id'));
}

export async function countRecoveryCodes(db: Db, userId: number): Promise<{ total: number; remaining: number }> {
  const row = await db.get(db.qb.selectFrom('recovery_codes')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.count<number>('id').filterWhere('used_at', 'is', null).as('remaining'),
    ])
    .where('user_id', '=', userId));
  return { total: Number(row?.total ?? 0), remaining: Number(row?.remaining ?? 0) };
}

/** Spends a code: true when it was still unused (a racing request that spent it first makes this false). */
export async function spendRecoveryCode(db: Db, id: number, now: number): Promise<boolean> {
  return (await db.run(db.qb.updateTable('recovery_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null))).changes === 1;
}

/**
 * Seals every TOTP secret that is not sealed under the current key: clear ones (written before sealing existed) and
 * ones under an older key (a rotation). One transaction. Returns how many were sealed, and the users whose secret no
 * configured key opens (left as they are: those users need their 2FA reset).
 */
export async function resealTotpSecrets(db: Db, box: SecretBox): Promise<{ resealed: number; unreadable: number[] }> {
  return db.tx(async (tx) => {
    const rows = await tx.all(tx.qb.selectFrom('two_factor').select(['user_id', 'totp_secret', 'pending_secret'])
      .where((eb) => eb.or([eb('totp_secret', 'is not', null), eb('pending_secret', 'is not', null)])));
    let resealed = 0;
    const unreadable = new Set<number>();
    for (const row of rows) {
      const update: { totp_secret?: string; pending_secret?: string } = {};
      for (const column of ['totp_secret', 'pending_secret'] as const) {
        const value = row[column];
        if (value == null || sealedKeyId(value) === box.currentKeyId) continue;
        try {
          const clear = isSealed(value) ? openTotpSecret(box, row.user_id, value) : value;
          update[column] = box.seal(clear, placeOf(row.user_id));
          resealed++;
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          unreadable.add(row.user_id);
        }
      }
      if (Object.keys(update).length > 0) await tx.run(tx.qb.updateTable('two_factor').set(update).where('user_id', '=', row.user_id));
    }
    return { resealed, unreadable: [...unreadable] };
  });
}
