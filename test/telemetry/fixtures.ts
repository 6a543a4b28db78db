// Telemetry test fixtures: roles, devices and monitors relations written with direct SQL (those endpoints belong to
// other domains), and request helpers for the telemetry routes.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { TestApp, TestResponse } from '../support/app.ts';

export function addRole(t: TestApp, name: string): number {
  return Number(t.deps.db.sqlite.prepare(`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
    self_device_management, self_report_management, self_alarm_management, created_at) VALUES (?, 0, 0, 0, 0, 0, 0, 0)`).run(name).lastInsertRowid);
}

export function addDevice(t: TestApp, properties: Record<string, unknown>): number {
  return Number(t.deps.db.sqlite.prepare('INSERT INTO devices (properties, last_update, created_at) VALUES (?, ?, ?)')
    .run(JSON.stringify(properties), t.clock.now(), t.clock.now()).lastInsertRowid);
}

export function addMonitors(t: TestApp, roleId: number, deviceId: number, grant: { mm?: boolean; reads?: string[]; edits?: string[] } = {}): void {
  t.deps.db.sqlite.prepare('INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?)')
    .run(roleId, deviceId, grant.mm ? 1 : 0, JSON.stringify(grant.reads ?? []), JSON.stringify(grant.edits ?? []));
}

let users = 0;

/** A user in a fresh role, with the given grant on each named device (created when missing). */
export async function userWithNodes(t: TestApp, grants: Record<string, { mm?: boolean; reads?: string[]; edits?: string[] }>):
  Promise<{ id: number; token: string; roleId: number }> {
  const user = await t.createUser(`telemetry${++users}-${process.pid}@test`);
  // The premium bucket, so that batches of queries are not refused by the cost limiter (docs/api.md#rate-limit, tested elsewhere).
  t.deps.db.sqlite.prepare("UPDATE users SET tier = 'premium' WHERE id = ?").run(user.id);
  const roleId = addRole(t, `role of ${user.id}`);
  t.deps.db.sqlite.prepare('INSERT INTO members (role_id, user_id) VALUES (?, ?)').run(roleId, user.id);
  for (const [nodeId, grant] of Object.entries(grants)) addMonitors(t, roleId, deviceOf(t, nodeId), grant);
  return { ...user, roleId };
}

/** The device with this nodeId, created when missing. */
export function deviceOf(t: TestApp, nodeId: string): number {
  const id = t.deps.db.sqlite.prepare('SELECT id FROM devices WHERE node_id = ?').pluck().get(nodeId) as number | undefined;
  return id ?? addDevice(t, { nodeId, nodeType: 'smartgridController' });
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

export function tableNames(t: TestApp): string[] {
  return t.deps.db.sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'telemetry_shard_[0-9]*' ORDER BY name").pluck().all() as string[];
}

export function countPoints(t: TestApp): number {
  return tableNames(t).reduce((n, table) => n + (t.deps.db.sqlite.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number), 0);
}
