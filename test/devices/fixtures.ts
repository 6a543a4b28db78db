// Role graph fixtures written with direct SQL: the roles/manages/members endpoints belong to another domain, and the
// device tests must not depend on them. Devices may be created over HTTP (the code under test) or directly here.
import assert from 'node:assert/strict';
import { RIGHTS, RIGHT_COLUMN, type Right } from '../../src/access/rights.ts';
import type { TestApp, TestResponse } from '../support/app.ts';

export type Flags = Partial<Record<Right, boolean>>;

const flagValues = (flags: Flags, prefix = '') =>
  Object.fromEntries(RIGHTS.map((r) => [`${prefix}${RIGHT_COLUMN[r]}`, flags[r] ? 1 : 0]));

export function addRole(t: TestApp, name: string, selfRights: Flags = {}): number {
  const info = t.deps.db.sqlite.prepare(`INSERT INTO roles (name, ${RIGHTS.map((r) => `self_${RIGHT_COLUMN[r]}`).join(', ')}, created_at)
    VALUES (@name, ${RIGHTS.map((r) => `@self_${RIGHT_COLUMN[r]}`).join(', ')}, 0)`).run({ name, ...flagValues(selfRights, 'self_') });
  return Number(info.lastInsertRowid);
}

export function addManages(t: TestApp, parentRoleId: number, childRoleId: number, flags: Flags = {}): number {
  const info = t.deps.db.sqlite.prepare(`INSERT INTO manages (parent_role_id, child_role_id, ${RIGHTS.map((r) => RIGHT_COLUMN[r]).join(', ')})
    VALUES (@parent, @child, ${RIGHTS.map((r) => `@${RIGHT_COLUMN[r]}`).join(', ')})`).run({ parent: parentRoleId, child: childRoleId, ...flagValues(flags) });
  return Number(info.lastInsertRowid);
}

export function addMember(t: TestApp, roleId: number, userId: number): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO members (role_id, user_id) VALUES (?, ?)').run(roleId, userId).lastInsertRowid);
}

/** A device written directly (no monitors relation unless added). */
export function addDevice(t: TestApp, properties: Record<string, unknown> = {}, lastUpdate = t.clock.now()): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO devices (properties, last_update, created_at) VALUES (?, ?, ?)')
    .run(JSON.stringify(properties), lastUpdate, lastUpdate).lastInsertRowid);
}

export function addMonitors(t: TestApp, roleId: number, deviceId: number, grant: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?)')
    .run(roleId, deviceId, grant.mm ? 1 : 0, JSON.stringify(grant.reads ?? []), JSON.stringify(grant.edits ?? [])).lastInsertRowid);
}

let counter = 0;

/** A new user who is a direct member of the given roles. */
export async function userIn(t: TestApp, ...roleIds: number[]): Promise<{ id: number; token: string }> {
  const user = await t.createUser(`user${++counter}-${process.pid}@test`);
  for (const roleId of roleIds) addMember(t, roleId, user.id);
  return user;
}

export function storedDevice(t: TestApp, id: number): { properties: Record<string, unknown>; lastUpdate: number } | undefined {
  const row = t.deps.db.sqlite.prepare('SELECT properties, last_update FROM devices WHERE id = ?').get(id) as { properties: string; last_update: number } | undefined;
  return row && { properties: JSON.parse(row.properties), lastUpdate: row.last_update };
}

export function storedMonitors(t: TestApp, deviceId: number): { id: number; role_id: number; monitor_management: number; reads: string; edits: string }[] {
  return t.deps.db.sqlite.prepare('SELECT id, role_id, monitor_management, reads, edits FROM monitors WHERE device_id = ? ORDER BY id').all(deviceId) as never;
}

export function count(t: TestApp, table: 'devices' | 'monitors' | 'license_datalink'): number {
  return t.deps.db.sqlite.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
}

/** POST /v1/device as `token`; asserts 200 and returns the device id. */
export async function createDevice(t: TestApp, token: string, roleId: number, properties: Record<string, unknown> = {}): Promise<number> {
  const res = await t.request('POST', `/v1/device?roleId=${roleId}`, { token, body: { properties } });
  assert.equal(res.status, 200, res.text);
  return res.body.device.id;
}

export function ok(res: TestResponse, status = 200): TestResponse['body'] {
  assert.equal(res.status, status, res.text);
  return res.body;
}

export const iso = (ms: number) => new Date(ms).toISOString();
