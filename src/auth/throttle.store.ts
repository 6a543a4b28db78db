// Failed secret checks (`auth_failures`), the rows the throttles count.
import type { Db } from '../db/open.ts';
import type { AuthFailuresTable } from '../db/schema.ts';

type Scope = AuthFailuresTable['scope'];

/** The times of the failures of `scope`/`subject` after `since`, oldest first. */
export async function failureTimes(db: Db, scope: Scope, subject: string, since: number): Promise<number[]> {
  return (await db.all(db.qb.selectFrom('auth_failures').select('at')
    .where('scope', '=', scope).where('subject', '=', subject).where('at', '>', since)
    .orderBy('at').orderBy('id'))).map((r) => r.at);
}

/** Counts one failure; its row id. */
export async function insertFailure(db: Db, scope: Scope, subject: string, at: number): Promise<number> {
  return (await db.get(db.qb.insertInto('auth_failures').values({ scope, subject, at }).returning('id')))!.id;
}

export async function deleteFailures(db: Db, ids: readonly number[]): Promise<void> {
  await db.run(db.qb.deleteFrom('auth_failures').where('id', 'in', ids));
}

export async function deleteFailuresOf(db: Db, scope: Scope, subject: string): Promise<void> {
  await db.run(db.qb.deleteFrom('auth_failures').where('scope', '=', scope).where('subject', '=', subject));
}

export async function deleteFailuresUntil(db: Db, until: number): Promise<void> {
  await db.run(db.qb.deleteFrom('auth_failures').where('at', '<=', until));
}
