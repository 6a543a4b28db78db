// The signing keys' rows (`signing_keys`): keys are only ever added, and a new one retires the previous ones.
import type { Db } from '../db/open.ts';

export interface SigningKeyRow {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

/** The key that signs now (the newest not retired), or undefined when there is none yet. */
export async function activeKeyId(db: Db): Promise<string | undefined> {
  return (await db.get(db.qb.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null)
    .orderBy('created_at', 'desc').orderBy('kid').limit(1)))?.kid;
}

/** Every key, newest first. */
export async function allSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.all(db.qb.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid'));
}

export async function findSigningKey(db: Db, kid: string): Promise<SigningKeyRow | undefined> {
  return db.get(db.qb.selectFrom('signing_keys').selectAll().where('kid', '=', kid));
}

/** Retires every key and adds `key` as the active one, in one transaction. */
export async function replaceActiveKey(db: Db, key: Omit<SigningKeyRow, 'retired_at'>, now: number): Promise<void> {
  await db.tx(async (tx) => {
    await tx.run(tx.qb.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null));
    await tx.run(tx.qb.insertInto('signing_keys').values({ ...key, retired_at: null }));
  });
}
