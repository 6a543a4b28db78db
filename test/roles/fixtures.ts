// Fixtures for role tests, written straight into the test app's database (the API under test is not its own fixture
// builder). Flags default to false; pass the ones a test needs. Every fixture goes through the database handle
// (t.deps.db) with SQL that means the same on SQLite and PostgreSQL, so each returns a promise: await it.
import { sql, type RawBuilder } from 'kysely';
import type { TestApp } from '../support/app.ts';
import { RIGHTS, RIGHT_COLUMN, type Right } from '../../src/access/rights.ts';

export type Flags = Record<Right, boolean>;
export const NONE: Flags = Object.fromEntries(RIGHTS.map((r) => [r, false])) as Flags;
export const ALL: Flags = Object.fromEntries(RIGHTS.map((r) => [r, true])) as Flags;
export const flags = (...on: Right[]): Flags => ({ ...NONE, ...Object.fromEntries(on.map((r) => [r, true])) });

let seq = 0;

// Constant column lists built from the constant RIGHT_COLUMN table (no input reaches them), hence sql.raw.
const flagColumns = (prefix = '') => sql.raw(RIGHTS.map((r) => `${prefix}${RIGHT_COLUMN[r]}`).join(', '));
const flagValues = (f: Flags) => sql.join(RIGHTS.map((r) => (f[r] ? 1 : 0)));

export async function addRole(t: TestApp, name = `role-${++seq}`, self: Flags = NONE, passwordHash: string | null = null): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO roles (name, ${flagColumns('self_')}, password_hash, created_at)
    VALUES (${name}, ${flagValues(self)}, ${passwordHash}, 0) RETURNING id`))!.id;
}

export async function addManages(t: TestApp, parent: number, child: number, f: Flags = NONE): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO manages (parent_role_id, child_role_id, ${flagColumns()})
    VALUES (${parent}, ${child}, ${flagValues(f)}) RETURNING id`))!.id;
}

/** A role with a parent (relation flags `f`); returns [roleId, managesId]. */
export async function addChild(t: TestApp, parent: number, f: Flags = NONE, self: Flags = NONE, name?: string): Promise<[number, number]> {
  const id = await addRole(t, name, self);
  return [id, await addManages(t, parent, id, f)];
}

export async function addMember(t: TestApp, roleId: number, userId: number): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO members (role_id, user_id) VALUES (${roleId}, ${userId}) RETURNING id`))!.id;
}

export async function addDevice(t: TestApp, properties: Record<string, unknown> = {}): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO devices (properties, last_update, created_at)
    VALUES (${JSON.stringify(properties)}, 0, 0) RETURNING id`))!.id;
}

export async function addMonitors(t: TestApp, roleId: number, deviceId: number, m: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits)
    VALUES (${roleId}, ${deviceId}, ${m.mm ? 1 : 0}, ${JSON.stringify(m.reads ?? [])}, ${JSON.stringify(m.edits ?? [])}) RETURNING id`))!.id;
}

/** A new user who is a direct member of `roleIds`. */
export async function userIn(t: TestApp, ...roleIds: number[]): Promise<{ id: number; token: string; email: string; memberIds: number[] }> {
  const email = `user-${++seq}@example.test`;
  const u = await t.createUser(email);
  const memberIds: number[] = [];
  for (const r of roleIds) memberIds.push(await addMember(t, r, u.id));
  return { ...u, email, memberIds };
}

/**
 * Hand-written SQL text (standard SQL, the same on SQLite and PostgreSQL) with `?` marking each bound parameter, as a
 * `sql` template: the values are bound exactly as `${value}` would bind them. The text is a constant of the test; no
 * `?` may appear in it other than as a parameter.
 */
function query<R>(text: string, params: readonly unknown[]): RawBuilder<R> {
  const parts = text.split('?');
  if (parts.length !== params.length + 1) throw new Error(`${parts.length - 1} placeholders, ${params.length} values: ${text}`);
  const pieces: RawBuilder<unknown>[] = [sql.raw(parts[0])];
  params.forEach((p, i) => pieces.push(sql`${p}`, sql.raw(parts[i + 1])));
  return sql<R>`${sql.join(pieces, sql.raw(''))}`;
}

/** The number of rows of `table` matching `where` (`?` parameters bound to `params`). */
export async function count(t: TestApp, table: string, where = '1 = 1', ...params: unknown[]): Promise<number> {
  return (await t.deps.db.get(query<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params)))!.n;
}

export async function row(t: TestApp, text: string, ...params: unknown[]): Promise<any> {
  return t.deps.db.get(query<any>(text, params));
}

export async function rows(t: TestApp, text: string, ...params: unknown[]): Promise<any[]> {
  return t.deps.db.all(query<any>(text, params));
}

/** The wire Role for a row created with these values. */
export const role = (id: number, name: string, selfRights: Flags = NONE, userRights: Partial<Flags> = {}) => ({ id, name, selfRights, userRights, isCompany: false });
/** The wire Manages. */
export const manages = (id: number, parentRoleId: number, childRoleId: number, f: Flags = NONE) => ({ id, parentRoleId, childRoleId, ...f });
