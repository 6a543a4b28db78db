// Fixtures for role tests, written straight into the test app's database (the API under test is not its own fixture
// builder). Flags default to false; pass the ones a test needs.
import type { TestApp } from '../support/app.ts';
import { RIGHTS, RIGHT_COLUMN, type Right } from '../../src/access/rights.ts';

export type Flags = Record<Right, boolean>;
export const NONE: Flags = Object.fromEntries(RIGHTS.map((r) => [r, false])) as Flags;
export const ALL: Flags = Object.fromEntries(RIGHTS.map((r) => [r, true])) as Flags;
export const flags = (...on: Right[]): Flags => ({ ...NONE, ...Object.fromEntries(on.map((r) => [r, true])) });

let seq = 0;

export function addRole(t: TestApp, name = `role-${++seq}`, self: Flags = NONE, passwordHash: string | null = null): number {
  const cols = RIGHTS.map((r) => `self_${RIGHT_COLUMN[r]}`);
  return Number(t.deps.db.sqlite.prepare(`INSERT INTO roles (name, ${cols.join(', ')}, password_hash, created_at) VALUES (?, ${cols.map(() => '?').join(', ')}, ?, 0)`)
    .run(name, ...RIGHTS.map((r) => (self[r] ? 1 : 0)), passwordHash).lastInsertRowid);
}

export function addManages(t: TestApp, parent: number, child: number, f: Flags = NONE): number {
  const cols = RIGHTS.map((r) => RIGHT_COLUMN[r]);
  return Number(t.deps.db.sqlite.prepare(`INSERT INTO manages (parent_role_id, child_role_id, ${cols.join(', ')}) VALUES (?, ?, ${cols.map(() => '?').join(', ')})`)
    .run(parent, child, ...RIGHTS.map((r) => (f[r] ? 1 : 0))).lastInsertRowid);
}

/** A role with a parent (relation flags `f`); returns [roleId, managesId]. */
export function addChild(t: TestApp, parent: number, f: Flags = NONE, self: Flags = NONE, name?: string): [number, number] {
  const id = addRole(t, name, self);
  return [id, addManages(t, parent, id, f)];
}

export function addMember(t: TestApp, roleId: number, userId: number): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO members (role_id, user_id) VALUES (?, ?)').run(roleId, userId).lastInsertRowid);
}

export function addDevice(t: TestApp, properties: Record<string, unknown> = {}): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO devices (properties, last_update, created_at) VALUES (?, 0, 0)')
    .run(JSON.stringify(properties)).lastInsertRowid);
}

export function addMonitors(t: TestApp, roleId: number, deviceId: number, m: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?)')
    .run(roleId, deviceId, m.mm ? 1 : 0, JSON.stringify(m.reads ?? []), JSON.stringify(m.edits ?? [])).lastInsertRowid);
}

/** A new user who is a direct member of `roleIds`. */
export async function userIn(t: TestApp, ...roleIds: number[]): Promise<{ id: number; token: string; email: string; memberIds: number[] }> {
  const email = `user-${++seq}@example.test`;
  const u = await t.createUser(email);
  return { ...u, email, memberIds: roleIds.map((r) => addMember(t, r, u.id)) };
}

export function count(t: TestApp, table: string, where = '1', ...params: unknown[]): number {
  return t.deps.db.sqlite.prepare(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck().get(...params) as number;
}

export function row(t: TestApp, sql: string, ...params: unknown[]): any {
  return t.deps.db.sqlite.prepare(sql).get(...params);
}

export function rows(t: TestApp, sql: string, ...params: unknown[]): any[] {
  return t.deps.db.sqlite.prepare(sql).all(...params);
}

/** The wire Role for a row created with these values. */
export const role = (id: number, name: string, selfRights: Flags = NONE, userRights: Partial<Flags> = {}) => ({ id, name, selfRights, userRights, isCompany: false });
/** The wire Manages. */
export const manages = (id: number, parentRoleId: number, childRoleId: number, f: Flags = NONE) => ({ id, parentRoleId, childRoleId, ...f });
