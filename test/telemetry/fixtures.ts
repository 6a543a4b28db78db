// Telemetry test fixtures: roles, devices and monitors relations written with direct SQL (those endpoints belong to
// other domains), and request helpers for the telemetry routes. Every fixture goes through the database handle
// (t.deps.db) with SQL that means the same on SQLite and PostgreSQL, so each returns a promise: await it.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../src/db/open.ts';
import { settleReads } from '../../src/telemetry/reads.ts';
import type { TestApp, TestResponse } from '../support/app.ts';

export async function addRole(t: TestApp, name: string): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
    self_device_management, self_report_management, self_alarm_management, created_at) VALUES (${name}, 0, 0, 0, 0, 0, 0, 0) RETURNING id`))!.id;
}

export async function addDevice(t: TestApp, properties: Record<string, unknown>): Promise<number> {
  return (await t.deps.db.get(sql<{ id: number }>`INSERT INTO devices (properties, last_update, created_at)
    VALUES (${JSON.stringify(properties)}, ${t.clock.now()}, ${t.clock.now()}) RETURNING id`))!.id;
}

export async function addMonitors(t: TestApp, roleId: number, deviceId: number, grant: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): Promise<void> {
  await t.deps.db.run(sql`INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits)
    VALUES (${roleId}, ${deviceId}, ${grant.mm ? 1 : 0}, ${JSON.stringify(grant.reads ?? [])}, ${JSON.stringify(grant.edits ?? [])})`);
}

/** Sets a user's rate-limit tier (docs/api.md#rate-limit). */
export async function setTier(t: TestApp, userId: number, tier: 'free' | 'basic' | 'premium'): Promise<void> {
  await t.deps.db.run(sql`UPDATE users SET tier = ${tier} WHERE id = ${userId}`);
}

let users = 0;

/** A user in a fresh role, with the given grant on each named device (created when missing). */
export async function userWithNodes(t: TestApp, grants: Record<string, { mm?: boolean; reads?: string[]; edits?: string[] }>):
  Promise<{ id: number; token: string; roleId: number }> {
  const user = await t.createUser(`telemetry${++users}-${process.pid}@test`);
  // The premium bucket, so that batches of queries are not refused by the cost limiter (docs/api.md#rate-limit, tested elsewhere).
  await setTier(t, user.id, 'premium');
  const roleId = await addRole(t, `role of ${user.id}`);
  await t.deps.db.run(sql`INSERT INTO members (role_id, user_id) VALUES (${roleId}, ${user.id})`);
  for (const [nodeId, grant] of Object.entries(grants)) await addMonitors(t, roleId, await deviceOf(t, nodeId), grant);
  return { ...user, roleId };
}

/** The device with this nodeId, created when missing. */
export async function deviceOf(t: TestApp, nodeId: string): Promise<number> {
  const row = await t.deps.db.get(sql<{ id: number }>`SELECT id FROM devices WHERE node_id = ${nodeId}`);
  return row?.id ?? addDevice(t, { nodeId, nodeType: 'smartgridController' });
}

/** A user with monitorManagement on every named device (may write and read them). */
export function writer(t: TestApp, ...nodeIds: string[]) {
  return userWithNodes(t, Object.fromEntries(nodeIds.map((n) => [n, { mm: true }])));
}

export const V1 = 'db=energy&rp=autogen';

export function write(t: TestApp, token: string, body: string | Uint8Array, query = V1, headers: Record<string, string> = {}): Promise<TestResponse> {
  return t.request('POST', `/v1/telemetry?${query}`, { token, raw: body, headers: { 'content-type': 'text/plain', ...headers } });
}

export async function writeOk(t: TestApp, token: string, body: string, query = V1): Promise<void> {
  const res = await write(t, token, body, query);
  assert.equal(res.status, 204, res.text);
}

export function writeGzip(t: TestApp, token: string, body: string, query = V1): Promise<TestResponse> {
  return write(t, token, gzipSync(body), query, { 'content-encoding': 'gzip' });
}

export function query(t: TestApp, token: string, body: unknown, params = ''): Promise<TestResponse> {
  return t.request('POST', `/v1/telemetry/query${params}`, { token, body });
}

export async function queryOk(t: TestApp, token: string, body: unknown, params = ''): Promise<any> {
  const res = await query(t, token, body, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

export const FROM_V1 = { measurement: 'power', namespace: { version: '1' as const, database: 'energy', retentionPolicy: 'autogen' } };

/** ISO of unix ms. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** Unix ms -> ns timestamp text. */
export const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** The handle of an app, or a handle itself. */
type Handle = TestApp | Db;
const dbOf = (h: Handle): Db => ('deps' in h ? h.deps.db : h);

/**
 * The shard tables (telemetry_shard_<namespaceId>_<window>, a negative window written m<abs>) that exist in the
 * database, by name, as the backend's own catalogue lists them (not telemetry_shards, which the engine keeps).
 */
export async function tableNames(h: Handle): Promise<string[]> {
  const db = dbOf(h);
  const rows = db.backend === 'postgres'
    ? await db.all(sql<{ name: string }>`SELECT tablename AS name FROM pg_tables
        WHERE schemaname = current_schema() AND tablename LIKE 'telemetry\\_shard\\_%' ORDER BY tablename`)
    : await db.all(sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'telemetry_shard_[0-9]*' ORDER BY name`);
  return rows.map((r) => r.name);
}

/**
 * The rows of a table (a shard table, or one of the catalogue's). On PostgreSQL once every staged point is in its shard
 * table (its folder runs in the background); on SQLite as they are (staging.test.ts watches the staged state itself).
 */
export async function countRows(h: Handle, table: string): Promise<number> {
  if (dbOf(h).backend === 'postgres') await settleReads(dbOf(h));
  return (await dbOf(h).get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;
}

/** The points of every shard table. */
export async function countPoints(h: Handle): Promise<number> {
  let n = 0;
  for (const table of await tableNames(h)) n += await countRows(h, table);
  return n;
}

/** A user with monitorManagement on a device with this nodeId, written directly. */
export async function fixtureUser(db: Db, nodeId: string): Promise<number> {
  const id = async (query: RawBuilder<{ id: number }>) => (await db.get(query))!.id;
  const userId = await id(sql`INSERT INTO users (email, password_hash, password_changed_at, created_at) VALUES ('prune@test', 'x', 0, 0) RETURNING id`);
  const roleId = await id(sql`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
    self_device_management, self_report_management, self_alarm_management, created_at) VALUES ('r', 0, 0, 0, 0, 0, 0, 0) RETURNING id`);
  await db.run(sql`INSERT INTO members (role_id, user_id) VALUES (${roleId}, ${userId})`);
  const deviceId = await id(sql`INSERT INTO devices (properties, last_update, created_at) VALUES (${JSON.stringify({ nodeId })}, 0, 0) RETURNING id`);
  await db.run(sql`INSERT INTO monitors (role_id, device_id, monitor_management) VALUES (${roleId}, ${deviceId}, 1)`);
  return userId;
}
