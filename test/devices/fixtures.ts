// Role graph fixtures written with direct SQL: the roles/manages/members endpoints belong to another domain, and the
// device tests must not depend on them. Devices may be created over HTTP (the code under test) or directly here.
// Every fixture goes through the database handle (t.deps.db), so each returns a promise: await it.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { RIGHTS, RIGHT_COLUMN, type Right } from '../../src/access/rights.ts';
import type { TestApp, TestResponse } from '../support/app.ts';

export type Flags = Partial<Record<Right, boolean>>;

// Constant column lists built from the constant RIGHT_COLUMN table (no input reaches them), hence sql.raw.
const flagColumns = (prefix = '') => sql.raw(RIGHTS.map((r) => `${prefix}${RIGHT_COLUMN[r]}`).join(', '));
const flagValues = (flags: Flags) => sql.join(RIGHTS.map((r) => (flags[r] ? 1 : 0)));

export async function addRole(t: TestApp, name: string, selfRights: Flags = {}): Promise<number> {
  const { db } = t.deps;
  const row = await db.get(sql<{ id: number }>`INSERT INTO roles (name, ${flagColumns('self_')}, created_at)
    VALUES (${name}, ${flagValues(selfRights)}, 0) RETURNING id`);
  return row!.id;
}

export async function addManages(t: TestApp, parentRoleId: number, childRoleId: number, flags: Flags = {}): Promise<number> {
  const { db } = t.deps;
  const row = await db.get(sql<{ id: number }>`INSERT INTO manages (parent_role_id, child_role_id, ${flagColumns()})
    VALUES (${parentRoleId}, ${childRoleId}, ${flagValues(flags)}) RETURNING id`);
  return row!.id;
}

export async function addMember(t: TestApp, roleId: number, userId: number): Promise<number> {
  const { db } = t.deps;
  return (await db.get(db.qb.insertInto('members').values({ role_id: roleId, user_id: userId }).returning('id')))!.id;
}

/** A device written directly (no monitors relation unless added). */
export async function addDevice(t: TestApp, properties: Record<string, unknown> = {}, lastUpdate = t.clock.now()): Promise<number> {
  const { db } = t.deps;
  return (await db.get(db.qb.insertInto('devices')
    .values({ properties: JSON.stringify(properties), last_update: lastUpdate, created_at: lastUpdate }).returning('id')))!.id;
}

export async function addMonitors(t: TestApp, roleId: number, deviceId: number, grant: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): Promise<number> {
  const { db } = t.deps;
  return (await db.get(db.qb.insertInto('monitors').values({
    role_id: roleId, device_id: deviceId, monitor_management: grant.mm ? 1 : 0,
    reads: JSON.stringify(grant.reads ?? []), edits: JSON.stringify(grant.edits ?? []),
  }).returning('id')))!.id;
}

let counter = 0;

/** A new user who is a direct member of the given roles. */
export async function userIn(t: TestApp, ...roleIds: number[]): Promise<{ id: number; token: string }> {
  const user = await t.createUser(`user${++counter}-${process.pid}@test`);
  for (const roleId of roleIds) await addMember(t, roleId, user.id);
  return user;
}

export async function storedDevice(t: TestApp, id: number): Promise<{ properties: Record<string, unknown>; lastUpdate: number } | undefined> {
  const { db } = t.deps;
  const row = await db.get(db.qb.selectFrom('devices').select(['properties', 'last_update']).where('id', '=', id));
  return row && { properties: JSON.parse(row.properties), lastUpdate: row.last_update };
}

export async function storedMonitors(t: TestApp, deviceId: number): Promise<{ id: number; role_id: number; monitor_management: number; reads: string; edits: string }[]> {
  const { db } = t.deps;
  return db.all(db.qb.selectFrom('monitors').select(['id', 'role_id', 'monitor_management', 'reads', 'edits'])
    .where('device_id', '=', deviceId).orderBy('id'));
}

export async function count(t: TestApp, table: 'devices' | 'monitors' | 'license_datalink'): Promise<number> {
  const { db } = t.deps;
  return (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;
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
