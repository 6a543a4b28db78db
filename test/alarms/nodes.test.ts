// Several nodes on one PostgreSQL database evaluate each rule once: points of one device written to three nodes and
// evaluated at the same time raise one alarm and one event; three nodes running the no-data check together raise each
// alarm once; a node that dies holding a shard (its connection cut, as kill -9 would) delays that shard, loses nothing.
// PostgreSQL only: the embedded SQLite backend is one process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { threeNodes, ROOT_ROLE_ID } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { lockShard } from '../../src/alarms/alarms.store.ts';
import { shardOf } from '../../src/alarms/alarms.service.ts';
import { alarms, createRule, eventTypesOf, meter, ruleBody, write } from './fixtures.ts';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';

describe('alarms on several nodes', { skip }, () => {
  it('points of one device written to three nodes and evaluated together: one alarm, one event per transition', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const m = await meter(a);
    const rules = [];
    for (let i = 0; i < 20; i++) rules.push(await createRule(a, ruleBody({ name: `r${i}`, deviceIds: [m.id], condition: { type: 'above', value: i } })));
    const t0 = a.clock.now();
    // every node gets points; B's second write is late (older than what A and C wrote) and below every threshold
    await write(a, `power,nodeId=${m.nodeId} p=50 ${t0}`, await a.token(a.adminId));
    await write(b, `power,nodeId=${m.nodeId} p=60 ${t0 + 1000}`, await b.token(b.adminId));
    await write(c, `power,nodeId=${m.nodeId} p=70 ${t0 + 2000}`, await c.token(c.adminId));
    await Promise.all([a, b, c].map((n) => n.deps.alarms.drain()));
    await write(b, `power,nodeId=${m.nodeId} p=-1 ${t0 + 500}`, await b.token(b.adminId));
    await Promise.all([a, b, c].map((n) => n.deps.alarms.drain()));
    const raised = await alarms(a, {}, await a.token(a.adminId));
    assert.equal(raised.length, 20);
    assert.deepEqual(new Set(raised.map((x) => x.ruleId)), new Set(rules.map((r) => r.id)));
    // each alarm was raised by the first point its shard's evaluation saw: one of the three, with that point's time
    const pointOf = new Map([[1, t0 - 3_600_000], [50, t0], [60, t0 + 1000], [70, t0 + 2000]]); // 1: meter()'s first point
    assert.ok(raised.every((x) => x.state === 'active_unack' && x.startTime === new Date(pointOf.get(x.value)!).toISOString()), JSON.stringify(raised));
    assert.deepEqual(await eventTypesOf(a), Array(20).fill('alarm.raised'));

    // recovery through the three nodes at once: each alarm clears once
    await Promise.all([a, b, c].map(async (n, i) => write(n, `power,nodeId=${m.nodeId} p=-5 ${t0 + 3000 + i}`, await n.token(n.adminId))));
    await Promise.all([a, b, c].map((n) => n.deps.alarms.drain()));
    assert.equal((await alarms(a, { state: ['cleared_unack'] }, await a.token(a.adminId))).length, 20);
    assert.equal((await eventTypesOf(a)).filter((x) => x === 'alarm.cleared').length, 20);
  });

  it('three nodes checking no-data together raise each alarm once', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const devices = [await meter(a), await meter(a), await meter(a)];
    for (let i = 0; i < 10; i++) await createRule(a, ruleBody({ name: `offline ${i}`, condition: { type: 'noData', seconds: 60 + i } }));
    a.clock.advance(3_600_000);
    for (let round = 0; round < 3; round++) await Promise.all([a, b, c].map((n) => n.deps.alarms.checkNoData()));
    const rows = await a.deps.db.all(sql<{ n: number }>`SELECT count(*) AS n FROM alarms GROUP BY rule_id, device_id`);
    assert.equal(rows.length, 10 * devices.length);
    assert.ok(rows.every((r) => Number(r.n) === 1));
    assert.equal((await eventTypesOf(a)).length, 10 * devices.length);
  });

  it('a node that dies holding a shard delays it; the others finish its work once the database lets the lock go', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const m = await meter(a);
    const rule = await createRule(a, ruleBody({ condition: { type: 'noData', seconds: 60 } }));
    a.clock.advance(120_000);
    // C is "mid-evaluation" of the rule's shard when it dies
    let pid = 0;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => { held = resolve; });
    const stuck = c.deps.db.write(async (tx) => {
      await lockShard(tx, shardOf(rule.id));
      pid = (await tx.get(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`))!.pid;
      held();
      await tx.get(sql`SELECT pg_sleep(60)`);
    }).catch((err: unknown) => err);
    await holding;
    // the timer on A and B skips a shard another node holds: nothing is raised twice, nothing waits
    assert.equal(await a.deps.alarms.checkNoData(), 0);
    assert.equal(await b.deps.alarms.checkNoData(), 0);
    await a.deps.db.run(sql`SELECT pg_terminate_backend(${pid})`);
    assert.ok(await stuck instanceof Error, 'the dead node\'s unit of work is rolled back');
    assert.equal(await b.deps.alarms.checkNoData(), 1);
    assert.equal(await a.deps.alarms.checkNoData(), 0);
    const [alarm] = await alarms(a, {}, await a.token(a.adminId));
    assert.deepEqual([alarm.deviceId, alarm.type, alarm.roleId], [m.id, 'noData', ROOT_ROLE_ID]);
  });
});
