// Wrong role join passwords (`join_failures`), the rows password-throttle.ts counts.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';

export interface Failures {
  n: number;
  last: number | null;
}

/** The user's failures after `since`: in all, and from `ipKey`. */
export async function joinFailures(db: Db, userId: number, ipKey: string, since: number): Promise<{ user: Failures; address: Failures }> {
  // aggregates without GROUP BY: always exactly one row
  const user = (await db.get(sql<Failures>`SELECT count(*) AS n, max(at) AS last FROM join_failures WHERE user_id = ${userId} AND at > ${since}`))!;
  const address = (await db.get(sql<Failures>`SELECT count(*) AS n, max(at) AS last FROM join_failures WHERE user_id = ${userId} AND ip_key = ${ipKey} AND at > ${since}`))!;
  return { user, address };
}

/** Counts one failure, after dropping those at or before `forgetUntil`; its row id. */
export async function insertJoinFailure(db: Db, userId: number, ipKey: string, now: number, forgetUntil: number): Promise<number> {
  await db.run(sql`DELETE FROM join_failures WHERE at <= ${forgetUntil}`);
  return (await db.get(db.qb.insertInto('join_failures').values({ user_id: userId, ip_key: ipKey, at: now }).returning('id')))!.id;
}

export async function deleteJoinFailure(db: Db, id: number): Promise<void> {
  await db.run(db.qb.deleteFrom('join_failures').where('id', '=', id));
}
