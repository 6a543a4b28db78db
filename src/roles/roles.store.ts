// SQL of roles: insert, update, lookups by id lists and descendant walks. Functions take `db` first and never decide
// rights (src/access does).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { ROLE_COLUMNS, selfRightsColumns, type Flags, type RoleRow } from './serialize.ts';
import { inValues } from '../db/in-list.ts';
import { ROOT_ROLE_ID } from '../access/root.ts';

export interface RoleWrite {
  name: string;
  selfRights: Flags;
  /** undefined = leave unchanged (insert: none), null = clear, string = the scrypt hash to store */
  passwordHash?: string | null;
  /** undefined = leave unchanged (insert: false) */
  isCompany?: boolean;
}

export async function insertRole(db: Db, input: RoleWrite, now: number): Promise<number> {
  const row = await db.get(db.qb.insertInto('roles').values({
    name: input.name, ...selfRightsColumns(input.selfRights), password_hash: input.passwordHash ?? null, created_at: now,
    is_company: input.isCompany ? 1 : 0, uuid: input.isCompany ? randomUUID() : null,
  }).returning('id'));
  return row!.id;
}

export async function updateRole(db: Db, roleId: number, input: RoleWrite): Promise<void> {
  await db.run(db.qb.updateTable('roles').set((eb) => ({
    name: input.name, ...selfRightsColumns(input.selfRights),
    ...(input.passwordHash !== undefined ? { password_hash: input.passwordHash } : {}),
    ...(input.isCompany !== undefined ? { is_company: input.isCompany ? 1 as const : 0 as const } : {}),
    // the first mark draws the uuid; it is kept from then on, so a company keeps its identity
    ...(input.isCompany ? { uuid: eb.fn.coalesce('uuid', eb.val(randomUUID())) } : {}),
  })).where('id', '=', roleId));
}

export async function findRole(db: Db, roleId: number): Promise<RoleRow | undefined> {
  return await db.get(db.qb.selectFrom('roles').select(ROLE_COLUMNS).where('id', '=', roleId)) as RoleRow | undefined;
}

/** The roles with these ids, ascending by id (missing ids are skipped). */
export async function findRoles(db: Db, ids: readonly number[]): Promise<RoleRow[]> {
  return db.all(sql<RoleRow>`SELECT ${sql.join(ROLE_COLUMNS.map((c) => sql.ref(c)))} FROM roles WHERE id ${inValues(ids)} ORDER BY id`);
}

/** The join password hash of a role; undefined when the role does not exist, null when it has none. */
export async function rolePasswordHash(db: Db, roleId: number): Promise<string | null | undefined> {
  return (await db.get(db.qb.selectFrom('roles').select('password_hash').where('id', '=', roleId)))?.password_hash;
}

/** The same role password hashed with today's parameters (passwords.ts needsRehash), only while it is still `was`. */
export async function upgradeRolePasswordHash(db: Db, roleId: number, was: string, hash: string): Promise<void> {
  await db.run(db.qb.updateTable('roles').set({ password_hash: hash }).where('id', '=', roleId).where('password_hash', '=', was));
}


export async function roleExists(db: Db, roleId: number): Promise<boolean> {
  return (await db.get(db.qb.selectFrom('roles').select('id').where('id', '=', roleId))) !== undefined;
}

/** The root role (id 1, every self right, no join password), made on first start. */
export async function insertRootRole(db: Db, now: number): Promise<void> {
  await db.run(db.qb.insertInto('roles').values({
    id: ROOT_ROLE_ID, name: 'root',
    self_role_management: 1, self_user_management: 1, self_view_management: 1,
    self_device_management: 1, self_report_management: 1, self_alarm_management: 1,
    password_hash: null, created_at: now,
  }));
}
