// SQL of member relations.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { MemberRow } from './serialize.ts';
import { inValues } from '../db/in-list.ts';

const SELECT = sql`SELECT mb.id AS id, mb.role_id AS role_id, u.email AS email FROM members mb JOIN users u ON u.id = mb.user_id`;

/** Creates the member relation (R, u) unless it exists; returns it, and whether it is new. */
export async function upsertMember(db: Db, roleId: number, userId: number): Promise<MemberRow & { created: boolean }> {
  const { changes } = await db.run(db.qb.insertInto('members').values({ role_id: roleId, user_id: userId }).onConflict((oc) => oc.doNothing()));
  const row = (await db.get(sql<MemberRow>`${SELECT} WHERE mb.role_id = ${roleId} AND mb.user_id = ${userId}`))!;
  return { ...row, created: changes === 1 };
}

/** Member relations by id with their user id, ascending (missing ids skipped). */
export async function findMembersByIds(db: Db, ids: readonly number[]): Promise<(MemberRow & { user_id: number })[]> {
  return db.all(sql<MemberRow & { user_id: number }>`SELECT mb.id AS id, mb.role_id AS role_id, mb.user_id AS user_id, u.email AS email
    FROM members mb JOIN users u ON u.id = mb.user_id WHERE mb.id ${inValues(ids)} ORDER BY mb.id`);
}

/** Member relations of these roles with their user id, ascending by id. */
export async function membersOfRoles(db: Db, roleIds: readonly number[]): Promise<(MemberRow & { user_id: number })[]> {
  return db.all(sql<MemberRow & { user_id: number }>`SELECT mb.id AS id, mb.role_id AS role_id, mb.user_id AS user_id, u.email AS email
    FROM members mb JOIN users u ON u.id = mb.user_id WHERE mb.role_id ${inValues(roleIds)} ORDER BY mb.id`);
}

export async function countMembers(db: Db, roleId: number): Promise<number> {
  return (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM members WHERE role_id = ${roleId}`))!.n;
}

export async function deleteMembers(db: Db, ids: readonly number[]): Promise<void> {
  await db.run(sql`DELETE FROM members WHERE id ${inValues(ids)}`);
}
