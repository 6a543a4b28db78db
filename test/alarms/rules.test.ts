// Alarm rules over HTTP on the backend under test: create, read, query, replace, delete; the contract's errors for bad
// rules (nothing stored); who may manage the rules of which role (alarmManagement, direct or indirect), and explain.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { addRole, addManages, userIn, flags, count } from '../roles/fixtures.ts';
import { createRule, meter, ruleBody, SERIES, NS } from './fixtures.ts';

async function setup(t: { after(fn: () => Promise<void>): void }): Promise<TestApp> {
  const app = await makeTestApp();
  t.after(() => app.close());
  return app;
}

describe('alarm rules: happy path', () => {
  it('creates, reads, queries, replaces and deletes a rule; the database holds what the answers say', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const rule = await createRule(app, ruleBody({
      deviceIds: [m.id], condition: { type: 'above', value: 10.5, hysteresis: 0.5 }, holdSeconds: 30, clearHoldSeconds: 10,
      notify: [{ userEmail: 'ADMIN@localhost', language: 'nl-BE' }], mailIntervalSeconds: 60,
    }));
    const at = new Date(app.clock.now()).toISOString();
    assert.deepEqual(rule, {
      id: rule.id, roleId: ROOT_ROLE_ID, name: 'overload', deviceIds: [m.id], nodeType: null, series: SERIES,
      condition: { type: 'above', value: 10.5, hysteresis: 0.5 }, holdSeconds: 30, clearHoldSeconds: 10, severity: 'major',
      notify: [{ userEmail: 'admin@localhost', language: 'nl' }], mailIntervalSeconds: 60, enabled: true, createdAt: at, updatedAt: at,
    });
    const row = await app.deps.db.get(sql<any>`SELECT role_id, kind, threshold, hysteresis, hold_ms, clear_hold_ms, namespace_key, device_ids FROM alarm_rules WHERE id = ${rule.id}`);
    assert.deepEqual({ ...row }, { role_id: ROOT_ROLE_ID, kind: 'above', threshold: 10.5, hysteresis: 0.5, hold_ms: 30_000, clear_hold_ms: 10_000, namespace_key: 'v1/energy/autogen', device_ids: `[${m.id}]` });

    const got = await app.request('GET', `/v1/alarm/rule/${rule.id}`, { token: app.adminToken });
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.rule, rule);
    const q = await app.request('POST', '/v1/alarm/rule/query', { token: app.adminToken, body: { filter: { deviceId: [m.id] } } });
    assert.deepEqual(q.body.rules.map((r: any) => r.id), [rule.id]);
    const none = await app.request('POST', '/v1/alarm/rule/query', { token: app.adminToken, body: { filter: { deviceId: [m.id + 1000] } } });
    assert.deepEqual(none.body.rules, []);

    app.clock.advance(1000);
    const put = await app.request('PUT', `/v1/alarm/rule/${rule.id}`, { token: app.adminToken, body: ruleBody({ name: 'offline', condition: { type: 'noData', seconds: 120 }, severity: 'critical', nodeType: 'powerMeter' }) });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual([put.body.rule.name, put.body.rule.condition, put.body.rule.deviceIds, put.body.rule.nodeType, put.body.rule.updatedAt],
      ['offline', { type: 'noData', seconds: 120 }, null, 'powerMeter', new Date(app.clock.now()).toISOString()]);
    assert.equal((await app.deps.db.get(sql<any>`SELECT no_data_ms FROM alarm_rules WHERE id = ${rule.id}`))!.no_data_ms, 120_000);

    const del = await app.request('DELETE', `/v1/alarm/rule/${rule.id}`, { token: app.adminToken });
    assert.equal(del.status, 204, del.text);
    assert.equal(await count(app, 'alarm_rules'), 0);
    assertError(await app.request('GET', `/v1/alarm/rule/${rule.id}`, { token: app.adminToken }), 404, 'NOT_FOUND');
  });
});

describe('alarm rules: validation (the contract\'s error shape, nothing stored)', () => {
  it('refuses unknown series, negative durations, thresholds on string fields, unreadable series and non-member recipients', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const post = (body: Record<string, unknown>, roleId = ROOT_ROLE_ID) => app.request('POST', `/v1/alarm/rule?roleId=${roleId}`, { token: app.adminToken, body });

    let e = assertError(await post(ruleBody({ series: { ...SERIES, field: 'nope' } })), 422, 'UNKNOWN_SERIES');
    assert.match(e.message, /series\.field: no field "nope" of measurement "power" in namespace v1\/energy\/autogen/);
    assertError(await post(ruleBody({ series: { ...SERIES, namespace: { ...NS, database: 'other' } } })), 422, 'UNKNOWN_SERIES');
    e = assertError(await post(ruleBody({ holdSeconds: -1 })), 400, 'BAD_REQUEST');
    assert.match(e.message, /holdSeconds/);
    e = assertError(await post(ruleBody({ condition: { type: 'noData', seconds: -5 } })), 400, 'BAD_REQUEST');
    assert.match(e.message, /condition/);
    assertError(await post(ruleBody({ clearHoldSeconds: -0.5 })), 400, 'BAD_REQUEST');
    e = assertError(await post(ruleBody({ series: { ...SERIES, field: 'status' } })), 422, 'FIELD_NOT_NUMERIC');
    assert.match(e.message, /holds string values/);
    // a no-data rule on a string field is fine: it watches arrivals, not values
    await createRule(app, ruleBody({ series: { ...SERIES, field: 'status' }, condition: { type: 'noData', seconds: 60 } }));
    assertError(await post(ruleBody({ severity: 'fatal' })), 400, 'BAD_REQUEST');
    assertError(await post(ruleBody({ condition: { type: 'above', value: 'high' } })), 400, 'BAD_REQUEST');
    assertError(await post(ruleBody({ extra: 1 })), 400, 'BAD_REQUEST');

    // a role that may read no device with the series
    const empty = await addRole(app, 'empty');
    await addManages(app, ROOT_ROLE_ID, empty, flags('alarmManagement'));
    e = assertError(await post(ruleBody(), empty), 422, 'SERIES_NOT_READABLE');
    assert.match(e.message, new RegExp(`role ${empty} may read no device`));
    e = assertError(await post(ruleBody({ deviceIds: [m.id] }), empty), 422, 'SERIES_NOT_READABLE');
    assert.match(e.message, new RegExp(`may not read device ${m.id}`));
    assertError(await post(ruleBody({ nodeType: 'battery' })), 422, 'SERIES_NOT_READABLE');
    assertError(await post(ruleBody({ deviceIds: [m.id + 999] })), 404, 'NOT_FOUND');
    // recipients must be members of the role
    const outsider = await userIn(app, empty);
    e = assertError(await post(ruleBody({ notify: [{ userEmail: outsider.email }] })), 422, 'UNPROCESSABLE');
    assert.match(e.message, /notify\[0\]\.userEmail/);
    assertError(await post(ruleBody({ notify: [{ userEmail: 'nobody@example.test' }] })), 422, 'UNPROCESSABLE');
    assert.equal(await count(app, 'alarm_rules'), 1);
  });
});

describe('alarm rules: rights (alarmManagement, direct or indirect)', () => {
  it('follows the flag on relations and self rights; 404 outside reach, 403 without the right; explain agrees', async (t) => {
    const app = await setup(t);
    const parent = await addRole(app, 'parent');
    const child = await addRole(app, 'child');
    const grandchild = await addRole(app, 'grandchild');
    const plain = await addRole(app, 'plain');
    await addManages(app, ROOT_ROLE_ID, parent);
    await addManages(app, parent, child, flags('alarmManagement'));
    await addManages(app, child, grandchild);
    await addManages(app, parent, plain);
    for (const r of [parent, child, grandchild, plain]) await meter(app, r);
    const u = await userIn(app, parent);

    await createRule(app, ruleBody(), child, u.token); // direct through the flagged relation
    await createRule(app, ruleBody(), grandchild, u.token); // indirect: below the flagged relation
    let e = assertError(await app.request('POST', `/v1/alarm/rule?roleId=${plain}`, { token: u.token, body: ruleBody() }), 403, 'FORBIDDEN');
    assert.match(e.message, new RegExp(`alarmManagement over role ${plain}`));
    assertError(await app.request('POST', `/v1/alarm/rule?roleId=${parent}`, { token: u.token, body: ruleBody() }), 403, 'FORBIDDEN');
    assertError(await app.request('POST', `/v1/alarm/rule?roleId=${ROOT_ROLE_ID}`, { token: u.token, body: ruleBody() }), 404, 'NOT_FOUND');
    // indirect roleManagement grants it too
    const admin2 = await addRole(app, 'admins');
    await addManages(app, ROOT_ROLE_ID, admin2);
    const viaRoles = await addRole(app, 'managed');
    await addManages(app, admin2, viaRoles, flags('roleManagement'));
    await meter(app, viaRoles);
    const v = await userIn(app, admin2);
    await createRule(app, ruleBody(), viaRoles, v.token);
    // a member of the child alone, without the flag: may read its rules, not change them
    const w = await userIn(app, child);
    const [ruleOfChild] = (await app.request('POST', '/v1/alarm/rule/query', { token: w.token, body: { filter: { roleId: [child] } } })).body.rules;
    assert.equal(ruleOfChild.roleId, child);
    assertError(await app.request('DELETE', `/v1/alarm/rule/${ruleOfChild.id}`, { token: w.token }), 403, 'FORBIDDEN');
    assertError(await app.request('GET', `/v1/alarm/rule/${ruleOfChild.id}`, { token: v.token }), 404, 'NOT_FOUND');
    assert.equal(await count(app, 'alarm_rules'), 3);

    const explain = async (token: string, roleId: number) => (await app.request('GET', `/v1/access/explain?roleId=${roleId}&right=alarmManagement`, { token })).body;
    const yes = await explain(u.token, grandchild);
    assert.deepEqual([yes.allowed, yes.grantedBy, yes.via.map((s: any) => s.kind)], [true, 'manages', ['member', 'manages', 'manages']]);
    assert.equal(yes.via[1].alarmManagement, true);
    assert.deepEqual(await explain(u.token, plain), { allowed: false, via: [] });
  });
});
