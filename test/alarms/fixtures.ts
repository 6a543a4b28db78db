// Fixtures of the alarm tests: a device with telemetry, rule bodies, writes and the alarm rows.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { TestApp } from '../support/app.ts';
import { ROOT_ROLE_ID } from '../../src/access/root.ts';
import { addDevice, addMonitors } from '../roles/fixtures.ts';

export const NS = { version: '1', database: 'energy', retentionPolicy: 'autogen' } as const;
export const SERIES = { namespace: NS, measurement: 'power', field: 'p' };
let seq = 0;

/** Points in line protocol (ms precision) into energy/autogen; asserts 204. */
export async function write(t: TestApp, lines: string, token = t.adminToken): Promise<void> {
  const res = await t.request('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', { token, raw: lines, headers: { 'content-type': 'text/plain' } });
  assert.equal(res.status, 204, res.text);
}

/** A device with a nodeId, monitored by `roleId` (monitorManagement), with one point of power.p and power.status. */
export async function meter(t: TestApp, roleId = ROOT_ROLE_ID, properties: Record<string, unknown> = {}): Promise<{ id: number; nodeId: string }> {
  const nodeId = `meter-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
  const id = await addDevice(t, { nodeId, nodeType: 'powerMeter', ...properties });
  await addMonitors(t, roleId, id, { mm: true });
  await write(t, `power,nodeId=${nodeId} p=1,status="ok" ${t.clock.now() - 3_600_000}`);
  return { id, nodeId };
}

export function ruleBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'overload', series: SERIES, condition: { type: 'above', value: 10 }, severity: 'major', ...over };
}

export async function createRule(t: TestApp, body: Record<string, unknown>, roleId = ROOT_ROLE_ID, token = t.adminToken): Promise<any> {
  const res = await t.request('POST', `/v1/alarm/rule?roleId=${roleId}`, { token, body });
  assert.equal(res.status, 200, res.text);
  return res.body.rule;
}

export async function alarms(t: TestApp, filter: Record<string, unknown> = {}, token = t.adminToken): Promise<any[]> {
  const res = await t.request('POST', '/v1/alarm/query', { token, body: { filter } });
  assert.equal(res.status, 200, res.text);
  return res.body.alarms;
}

export async function stateRow(t: TestApp, ruleId: number, deviceId: number): Promise<any> {
  return t.deps.db.get(sql`SELECT phase, since, last_at, last_value, alarm_id FROM alarm_states WHERE rule_id = ${ruleId} AND device_id = ${deviceId}`);
}

export async function eventTypesOf(t: TestApp): Promise<string[]> {
  return (await t.deps.db.all(sql<{ type: string }>`SELECT type FROM events WHERE type LIKE 'alarm.%' ORDER BY id`)).map((r) => r.type);
}
