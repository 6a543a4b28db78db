// SQL of member relations.
import type { Db } from '../db/open.ts';
import type { MemberRow } from './serialize.ts';
import { inJson, listParam } from '../db/in-list.ts';

const SELECT = 'SELECT mb.id AS id, mb.role_id AS role_id, u.email AS email FROM members mb JOIN users u ON u.id = mb.user_id';

/** Creates the member relation (R, u) unless it exists; returns it, and whether it is new. */
export function upsertMember(db: Db, roleId: number, userId: number): MemberRow & { created: boolean } {
  const { changes } = db.run(db.qb.insertInto('members').values({ role_id: roleId, user_id: userId }).onConflict((oc) => oc.doNothing()));
  const row = db.prepare(`${SELECT} WHERE mb.role_id = ? AND mb.user_id = ?`).get(roleId, userId) as MemberRow;
  return { ...row, created: changes === 1 };
}

/** Member relations by id with their user id, ascending (missing ids skipped). */
export function findMembersByIds(db: Db, ids: readonly number[]): (MemberRow & { user_id: number })[] {
  return db.prepare(`SELECT mb.id AS id, mb.role_id AS role_id, mb.user_id AS user_id, u.email AS email
    FROM members mb JOIN users u ON u.id = mb.user_id WHERE mb.id ${inJson()} ORDER BY mb.id`)
    .all(listParam(ids)) as (MemberRow & { user_id: number })[];
}

/** Member relations of these roles with their user id, ascending by id. */
export function membersOfRoles(db: Db, roleIds: readonly number[]): (MemberRow & { user_id: number })[] {
  return db.prepare(`SELECT mb.id AS id, mb.role_id AS role_id, mb.user_id AS user_id, u.email AS email
    FROM members mb JOIN users u ON u.id = mb.user_id WHERE mb.role_id ${inJson()} ORDER BY mb.id`)
    .all(listParam(roleIds)) as (MemberRow & { user_id: number })[];
}

export function countMembers(db: Db, roleId: number): number {
  return db.prepare('SELECT count(*) FROM members WHERE role_id = ?').pluck().get(roleId) as number;
}

export function deleteMembers(db: Db, ids: readonly number[]): void {
  db.prepare(`DELETE FROM members WHERE id ${inJson()}`).run(listParam(ids));
}
