// The installation's settings (`settings`, key → text), shared by every node on one database.
import type { Db } from '../db/open.ts';

export async function readSetting(db: Db, key: string): Promise<string | undefined> {
  return (await db.get(db.qb.selectFrom('settings').select('value').where('key', '=', key)))?.value;
}

/** Stores `value` unless the key has one already (several nodes starting at once: the first insert wins). */
export async function insertSettingIfAbsent(db: Db, key: string, value: string): Promise<void> {
  await db.run(db.qb.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()));
}

/** Replaces the value of `key` only while it is still `was` (another node may have replaced it meanwhile). */
export async function replaceSetting(db: Db, key: string, was: string, value: string): Promise<void> {
  await db.run(db.qb.updateTable('settings').set({ value }).where('key', '=', key).where('value', '=', was));
}
