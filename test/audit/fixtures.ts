// Helpers for the audit tests: the entries as the root sees them (through the API), the raw rows, and the one check
// every write test makes — "exactly these entries were added by this request, nothing else".
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { TestApp, TestResponse } from '../support/app.ts';

/** Every entry, newest first, as POST /v1/audit/query answers a root member (pages followed to the end). */
export async function allEntries(t: TestApp): Promise<any[]> {
  const out: any[] = [];
  let afterId: number | undefined;
  for (;;) {
    const res = await t.request('POST', '/v1/audit/query', { token: await t.token(t.adminId), body: { limit: 1000, ...(afterId !== undefined ? { afterId } : {}) } });
    assert.equal(res.status, 200, res.text);
    out.push(...res.body.entries);
    if (res.body.entries.length < 1000) return out;
    afterId = res.body.entries.at(-1).id;
  }
}

export async function auditCount(t: TestApp): Promise<number> {
  return (await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM audit_log`))!.n;
}

/** The raw text of every stored entry (for "no secret anywhere" checks). */
export async function auditText(t: TestApp): Promise<string> {
  return JSON.stringify(await t.deps.db.all(sql`SELECT * FROM audit_log`));
}

/**
 * Runs `send`, then returns the entries it added, oldest first. Every added entry carries the response's request id
 * and the test client's address.
 */
export async function added(t: TestApp, send: () => Promise<TestResponse>, status = 200): Promise<{ res: TestResponse; entries: any[] }> {
  const before = await auditCount(t);
  const res = await send();
  assert.equal(res.status, status, res.text);
  const entries = (await allEntries(t)).slice(0, (await auditCount(t)) - before).reverse();
  for (const e of entries) {
    assert.equal(e.requestId, res.headers.get('x-request-id'), 'entry carries the request id');
    assert.equal(e.clientAddress, '127.0.0.1');
    assert.equal(e.time, new Date(t.clock.now()).toISOString());
  }
  return { res, entries };
}

/** Runs a request that must be refused with `status` and asserts that it wrote no entry. */
export async function refusedWithoutEntry(t: TestApp, status: number, send: () => Promise<TestResponse>): Promise<TestResponse> {
  const before = await auditCount(t);
  const res = await send();
  assert.equal(res.status, status, res.text);
  assert.equal(await auditCount(t), before, `a refused request (${status} ${res.body?.code}) wrote an audit entry`);
  return res;
}

/** The entry without the fields every test checks through added() (id, time, request id, address). */
export function core(e: any): { actor: any; action: string; target: any; changes: any } {
  return { actor: e.actor, action: e.action, target: e.target, changes: e.changes };
}

export const FLAGS_ALL = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
export const FLAGS_NONE = { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };
