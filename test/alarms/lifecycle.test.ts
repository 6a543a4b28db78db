// Alarms end to end on the backend under test: points written over HTTP raise, hold, clear; late points do not flap;
// acknowledge and clear by API; at most one active alarm per rule and device; no-data on the timer; the state lives in
// the database (a fresh evaluator resumes it); events for every transition; who sees and handles which alarm.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { addRole, addManages, addMonitors, userIn, flags, count } from '../roles/fixtures.ts';
import { createAlarms } from '../../src/alarms/engine.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { alarms, createRule, eventTypesOf, meter, ruleBody, stateRow, write } from './fixtures.ts';

async function setup(t: { after(fn: () => Promise<void>): void }): Promise<TestApp> {
  const app = await makeTestApp();
  t.after(() => app.close());
  return app;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('alarms: thresholds as points are written', () => {
  it('raises after the hold, keeps one active alarm, ignores late points, clears past the hysteresis; events for each', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const rule = await createRule(app, ruleBody({ deviceIds: [m.id], condition: { type: 'above', value: 10, hysteresis: 2 }, holdSeconds: 20 }));
    const t0 = app.clock.now();
    await write(app, `power,nodeId=${m.nodeId} p=12 ${t0}\npower,nodeId=${m.nodeId} p=11 ${t0 + 10_000}`);
    await app.deps.alarms.drain();
    assert.deepEqual(await alarms(app), []);
    assert.deepEqual({ ...await stateRow(app, rule.id, m.id) }, { phase: 'pending', since: t0, last_at: t0 + 10_000, last_value: 11, alarm_id: null });

    app.clock.advance(30_000);
    await write(app, `power,nodeId=${m.nodeId} p=13 ${t0 + 20_000}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    const [a] = await alarms(app);
    assert.deepEqual(a, {
      id: a.id, ruleId: rule.id, ruleName: 'overload', roleId: ROOT_ROLE_ID, deviceId: m.id, type: 'above', severity: 'major', state: 'active_unack',
      series: rule.series, value: 12, startTime: iso(t0), raisedTime: iso(app.clock.now()), ackTime: null, ackBy: null, clearTime: null, clearedBy: null, endTime: null,
    });
    // still breached, and a late point below the hysteresis line: nothing changes
    await write(app, `power,nodeId=${m.nodeId} p=15 ${t0 + 30_000}`);
    assert.equal(await app.deps.alarms.drain(), 0);
    await write(app, `power,nodeId=${m.nodeId} p=1 ${t0 + 25_000}\npower,nodeId=${m.nodeId} p=0 ${t0 + 1_000}`);
    assert.equal(await app.deps.alarms.drain(), 0);
    assert.equal(await count(app, 'alarms'), 1);
    assert.equal((await stateRow(app, rule.id, m.id)).last_at, t0 + 30_000);
    // inside the band (9 > 10 - 2): still active
    await write(app, `power,nodeId=${m.nodeId} p=9 ${t0 + 40_000}`);
    await app.deps.alarms.drain();
    assert.equal((await alarms(app))[0].state, 'active_unack');

    const ack = await app.request('POST', `/v1/alarm/${a.id}/ack`, { token: app.adminToken });
    assert.equal(ack.status, 200, ack.text);
    assert.deepEqual([ack.body.alarm.state, ack.body.alarm.ackBy, ack.body.alarm.ackTime], ['active_ack', 'admin@localhost', iso(app.clock.now())]);
    const again = await app.request('POST', `/v1/alarm/${a.id}/ack`, { token: app.adminToken });
    assert.deepEqual(again.body.alarm, ack.body.alarm);

    await write(app, `power,nodeId=${m.nodeId} p=8 ${t0 + 50_000}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    const [cleared] = await alarms(app);
    assert.deepEqual([cleared.state, cleared.clearedBy, cleared.endTime], ['cleared_ack', 'rule', iso(t0 + 50_000)]);
    assert.deepEqual({ ...await stateRow(app, rule.id, m.id) }, { phase: 'normal', since: null, last_at: t0 + 50_000, last_value: 8, alarm_id: null });
    assert.deepEqual(await eventTypesOf(app), ['alarm.raised', 'alarm.acknowledged', 'alarm.cleared']);
    const ev = await app.deps.db.get(sql<{ role_id: number; device_id: number; subject_id: string; data: string }>`SELECT role_id, device_id, subject_id, data FROM events WHERE type = 'alarm.cleared'`);
    assert.deepEqual([ev!.role_id, ev!.device_id, ev!.subject_id], [ROOT_ROLE_ID, m.id, String(a.id)]);
    assert.equal(JSON.parse(ev!.data).alarm.state, 'cleared_ack');

    // a new breach is a new alarm; the history keeps both
    await write(app, `power,nodeId=${m.nodeId} p=20 ${t0 + 60_000}\npower,nodeId=${m.nodeId} p=21 ${t0 + 80_000}`);
    await app.deps.alarms.drain();
    const both = await alarms(app);
    assert.deepEqual(both.map((x) => x.state), ['active_unack', 'cleared_ack']);
    assert.deepEqual((await alarms(app, { state: ['cleared_ack'] })).map((x) => x.id), [a.id]);
    assert.deepEqual((await alarms(app, { severity: ['critical'] })), []);
    assert.deepEqual((await alarms(app, { to: iso(t0 + 59_000) })).map((x) => x.id), [a.id]);
    assert.deepEqual((await alarms(app, { from: iso(t0 + 51_000) })).map((x) => x.id), [both[0].id]);
    const page = await app.request('POST', '/v1/alarm/query', { token: app.adminToken, body: { limit: 1 } });
    assert.deepEqual(page.body.alarms.map((x: any) => x.id), [both[0].id]);
    const next = await app.request('POST', '/v1/alarm/query', { token: app.adminToken, body: { limit: 1, beforeId: both[0].id } });
    assert.deepEqual(next.body.alarms.map((x: any) => x.id), [a.id]);
    assertError(await app.request('POST', '/v1/alarm/query', { token: app.adminToken, body: { filter: { state: ['open'] } } }), 400, 'BAD_REQUEST');
  });

  it('a hold ends on the timer when no point comes: the breach raises once its hold is over, the recovery clears once its clear hold is', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const rule = await createRule(app, ruleBody({ deviceIds: [m.id], holdSeconds: 20, clearHoldSeconds: 30 }));
    const t0 = app.clock.now();
    await write(app, `power,nodeId=${m.nodeId} p=12 ${t0}`);
    await app.deps.alarms.drain();
    assert.equal((await stateRow(app, rule.id, m.id)).phase, 'pending');
    app.clock.advance(19_999);
    assert.equal(await app.deps.alarms.checkNoData(), 0);
    app.clock.advance(1);
    assert.equal(await app.deps.alarms.checkNoData(), 1);
    const [a] = await alarms(app);
    assert.deepEqual([a.state, a.value, a.startTime, a.raisedTime], ['active_unack', 12, iso(t0), iso(t0 + 20_000)]);
    assert.deepEqual({ ...await stateRow(app, rule.id, m.id) }, { phase: 'active', since: null, last_at: t0, last_value: 12, alarm_id: a.id });
    assert.equal(await app.deps.alarms.checkNoData(), 0); // raised once
    // the next point still breaches: nothing new; then a recovery, held by the timer too
    await write(app, `power,nodeId=${m.nodeId} p=13 ${t0 + 21_000}`);
    assert.equal(await app.deps.alarms.drain(), 0);
    await write(app, `power,nodeId=${m.nodeId} p=3 ${t0 + 22_000}`);
    assert.equal(await app.deps.alarms.drain(), 0);
    assert.equal((await stateRow(app, rule.id, m.id)).phase, 'clearing');
    app.clock.set(t0 + 22_000 + 29_000);
    assert.equal(await app.deps.alarms.checkNoData(), 0);
    app.clock.set(t0 + 22_000 + 30_000);
    assert.equal(await app.deps.alarms.checkNoData(), 1);
    const [cleared] = await alarms(app);
    assert.deepEqual([cleared.id, cleared.state, cleared.endTime], [a.id, 'cleared_unack', iso(t0 + 22_000)]);
    assert.equal((await stateRow(app, rule.id, m.id)).phase, 'normal');
    assert.deepEqual(await eventTypesOf(app), ['alarm.raised', 'alarm.cleared']);
  });

  it('a clear by hand while breached holds until the value recovers; the database refuses a second active alarm', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const rule = await createRule(app, ruleBody());
    const t0 = app.clock.now();
    await write(app, `power,nodeId=${m.nodeId} p=50 ${t0}`);
    await app.deps.alarms.drain();
    const [a] = await alarms(app);
    const cleared = await app.request('POST', `/v1/alarm/${a.id}/clear`, { token: app.adminToken });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual([cleared.body.alarm.state, cleared.body.alarm.clearedBy, cleared.body.alarm.endTime], ['cleared_unack', 'admin@localhost', iso(t0)]);
    assert.equal((await stateRow(app, rule.id, m.id)).phase, 'suppressed');
    await write(app, `power,nodeId=${m.nodeId} p=60 ${t0 + 1000}`);
    assert.equal(await app.deps.alarms.drain(), 0);
    await write(app, `power,nodeId=${m.nodeId} p=5 ${t0 + 2000}\npower,nodeId=${m.nodeId} p=70 ${t0 + 3000}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    assert.deepEqual((await alarms(app)).map((x) => x.state), ['active_unack', 'cleared_unack']);
    await assert.rejects(app.deps.db.run(sql`INSERT INTO alarms (rule_id, rule_name, role_id, device_id, kind, severity, series, start_at, raised_at)
      VALUES (${rule.id}, 'x', ${ROOT_ROLE_ID}, ${m.id}, 'above', 'major', '{}', 0, 0)`));
  });
});

describe('alarms: recorded times', () => {
  it('a pair\'s alarms follow each other in the history, and each is acknowledged and cleared after it was raised, whatever the clock reads', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    await createRule(app, ruleBody());
    const t0 = app.clock.now();
    app.clock.set(t0 + 1_000);
    await write(app, `power,nodeId=${m.nodeId} p=50 ${t0}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    app.clock.set(t0 + 20_000);
    await write(app, `power,nodeId=${m.nodeId} p=0 ${t0 + 1_000}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    // another node's clock, or one read before the shard's lock was granted: behind the clear just recorded
    app.clock.set(t0 + 10_000);
    await write(app, `power,nodeId=${m.nodeId} p=50 ${t0 + 2_000}`);
    assert.equal(await app.deps.alarms.drain(), 1);
    const [second, first] = await alarms(app);
    assert.deepEqual([first.raisedTime, first.clearTime, second.state, second.startTime], [iso(t0 + 1_000), iso(t0 + 20_000), 'active_unack', iso(t0 + 2_000)]);
    assert.equal(second.raisedTime, first.clearTime);
    app.clock.set(t0 + 15_000);
    const acked = await app.request('POST', `/v1/alarm/${second.id}/ack`, { token: app.adminToken });
    assert.equal(acked.status, 200, acked.text);
    assert.deepEqual([acked.body.alarm.raisedTime, acked.body.alarm.ackTime], [iso(t0 + 20_000), iso(t0 + 20_000)]);
    const cleared = await app.request('POST', `/v1/alarm/${second.id}/clear`, { token: app.adminToken });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual([cleared.body.alarm.raisedTime, cleared.body.alarm.clearTime], [iso(t0 + 20_000), iso(t0 + 20_000)]);
    const rows = await app.deps.db.all(sql<{ raised_at: number; ack_at: number | null; clear_at: number }>`SELECT raised_at, ack_at, clear_at FROM alarms ORDER BY id`);
    assert.deepEqual(rows.map((r) => [r.raised_at, r.ack_at, r.clear_at].map((v) => (v === null ? null : Number(v)))),
      [[t0 + 1_000, null, t0 + 20_000], [t0 + 20_000, t0 + 20_000, t0 + 20_000]]);
  });
});

describe('alarms: no data, restarts', () => {
  it('raises when a device goes quiet for the duration and clears on its next point; a fresh evaluator resumes the stored state', async (t) => {
    const app = await setup(t);
    const m = await meter(app);
    const quiet = await meter(app);
    const rule = await createRule(app, ruleBody({ name: 'offline', condition: { type: 'noData', seconds: 60 }, severity: 'critical', deviceIds: [m.id, quiet.id] }));
    const t0 = app.clock.now();
    await write(app, `power,nodeId=${m.nodeId} p=1 ${t0}`);
    await app.deps.alarms.drain();
    // the quiet one's newest point is an hour old (meter() wrote it): overdue at the first check
    assert.equal(await app.deps.alarms.checkNoData(), 1);
    app.clock.advance(59_000);
    assert.equal(await app.deps.alarms.checkNoData(), 0);
    app.clock.advance(1_000);
    assert.equal(await app.deps.alarms.checkNoData(), 1);
    assert.equal(await app.deps.alarms.checkNoData(), 0, 'raised once');
    const raised = await alarms(app);
    assert.deepEqual(raised.map((x) => [x.deviceId, x.type, x.severity, x.state, x.value, x.startTime]),
      [[m.id, 'noData', 'critical', 'active_unack', null, iso(t0)], [quiet.id, 'noData', 'critical', 'active_unack', null, iso(t0 - 3_600_000)]]);

    // another evaluator (a restart: nothing in memory) picks up where the database says
    const fresh = createAlarms({ db: app.deps.db, now: app.clock.now, log: createLogger('error'), mailer: app.deps.mailer, consoleUrl: 'http://x', wake: () => {} });
    fresh.written({ namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' }, body: [`power,nodeId=${m.nodeId} p=2 ${app.clock.now()}`], precision: 'ms', now: app.clock.now() });
    assert.equal(await fresh.drain(), 1);
    assert.deepEqual((await alarms(app, { deviceId: [m.id] }))[0].state, 'cleared_unack');
    assert.equal(await fresh.checkNoData(), 0);
    assert.deepEqual(await eventTypesOf(app), ['alarm.raised', 'alarm.raised', 'alarm.cleared']);
    assert.equal((await stateRow(app, rule.id, quiet.id)).phase, 'active');
  });
});

describe('alarms: who sees and handles them', () => {
  it('a user sees the alarms of devices it may read; handling needs alarmManagement or monitorManagement', async (t) => {
    const app = await setup(t);
    const site = await addRole(app, 'site');
    const other = await addRole(app, 'other');
    await addManages(app, ROOT_ROLE_ID, site, flags('alarmManagement'));
    await addManages(app, ROOT_ROLE_ID, other);
    const m = await meter(app, site);
    await createRule(app, ruleBody(), site);
    await write(app, `power,nodeId=${m.nodeId} p=50 ${app.clock.now()}`);
    await app.deps.alarms.drain();
    const [a] = await alarms(app);

    const stranger = await userIn(app, other);
    assert.deepEqual(await alarms(app, {}, stranger.token), []);
    assertError(await app.request('POST', `/v1/alarm/${a.id}/ack`, { token: stranger.token }), 404, 'NOT_FOUND');
    const viewer = await userIn(app, other);
    const reader = await addRole(app, 'reader');
    await addManages(app, ROOT_ROLE_ID, reader);
    await addMonitors(app, reader, m.id, { reads: ['name'] });
    const r = await userIn(app, reader);
    assert.deepEqual((await alarms(app, {}, r.token)).map((x) => x.id), [a.id]);
    const e = assertError(await app.request('POST', `/v1/alarm/${a.id}/clear`, { token: r.token }), 403, 'FORBIDDEN');
    assert.match(e.message, /alarmManagement over role/);
    const operator = await userIn(app, site);
    const ok = await app.request('POST', `/v1/alarm/${a.id}/ack`, { token: operator.token });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.alarm.ackBy, operator.email);
    assert.equal((await app.deps.db.get(sql<{ ack_by: number }>`SELECT ack_by FROM alarms WHERE id = ${a.id}`))!.ack_by, operator.id);
    assert.deepEqual(await alarms(app, {}, viewer.token), []);
  });
});
