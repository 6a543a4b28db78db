// Three gridkeeper processes (the built executable) on one PostgreSQL database, one killed with SIGKILL while it holds
// a rule shard's lock in the middle of an evaluation: the two others evaluate every shard afterwards — the dead node's
// shards included — and every alarm is raised once: at most one open alarm per rule and device at any time (the
// database's unique index would refuse a second, and an evaluation that ran into it would log an error), one event per
// transition, the thresholds cleared and raised again through the survivors, and each no-data alarm raised once by
// their timers. PostgreSQL only: the embedded SQLite backend is one process.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { isolatedBinary, startBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, kill9, loginOver, postgresCheckDb, serverErrors, sleep } from '../support/harness.ts';
import { emptyPostgres, testBackend } from '../support/postgres.ts';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';
const NS = { version: '1', database: 'energy', retentionPolicy: 'autogen' };
const SERIES = { namespace: NS, measurement: 'power', field: 'p' };
/** threshold rules and no-data rules: 16 of each covers every shard (rule id modulo 16) with both kinds */
const RULES = 16;
const DEVICES = 4;
const NO_DATA_SECONDS = 8;

const running: RunningBinary[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const r of running) await kill9(r);
  for (const c of cleanups.reverse()) await c();
});

describe('alarms: a node killed with kill -9', { skip }, () => {
  it('the other nodes take over its rule shards; every alarm is raised once', { timeout: 180_000 }, async () => {
    const { dir, exe } = isolatedBinary();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const database = await emptyPostgres();
    cleanups.push(() => database.drop());
    const check = postgresCheckDb(database.url);
    cleanups.push(() => check.close());
    const key = randomBytes(32).toString('base64');
    // each node's connections carry its name, so the test can see which node holds a shard lock
    const node = async (name: string) => {
      const r = await startBinary(exe, ['--data-dir', join(dir, name)], {
        GRIDKEEPER_DATABASE_URL: `${database.url}?application_name=gk-alarms-${name}`, GRIDKEEPER_SECRET_KEY: key,
        GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'warn',
      });
      running.push(r);
      return r;
    };
    const a = await node('a');
    const [b, c] = await Promise.all([node('b'), node('c')]);
    const [ca, cb, cc] = [a, b, c].map((n) => httpClient(n.url, { maxSockets: 4 }));
    cleanups.push(() => { for (const x of [ca, cb, cc]) x.close(); });
    const { access: token } = await loginOver(ca, ADMIN_EMAIL, ADMIN_PASSWORD);
    const ok = async (client: HttpClient, method: string, path: string, body?: unknown) => {
      const r = await client.request(method, path, { token, body });
      assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
      return r.body;
    };
    let clock = Date.now();
    /** one point per device, each later than every point before it */
    const write = (client: HttpClient, value: number) => {
      const at = (clock = Math.max(clock + 1, Date.now()));
      const lines = Array.from({ length: DEVICES }, (_, i) => `power,nodeId=k${i} p=${value} ${at}`).join('\n');
      return client.request('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', { token, raw: lines, headers: { 'content-type': 'text/plain' } });
    };
    const ids: number[] = [];
    for (let i = 0; i < DEVICES; i++) ids.push((await ok(ca, 'POST', '/v1/device?roleId=1', { properties: { name: `meter ${i}`, nodeId: `k${i}`, nodeType: 'powerMeter' } })).device.id);
    assert.equal((await write(ca, 1)).status, 204);
    const threshold: number[] = [];
    const noData: number[] = [];
    for (let i = 0; i < RULES; i++) {
      threshold.push((await ok(ca, 'POST', '/v1/alarm/rule?roleId=1', { name: `high ${i}`, deviceIds: ids, series: SERIES, condition: { type: 'above', value: 50 }, severity: 'major' })).rule.id);
    }
    for (let i = 0; i < RULES; i++) {
      noData.push((await ok(ca, 'POST', '/v1/alarm/rule?roleId=1', { name: `quiet ${i}`, deviceIds: ids, series: SERIES, condition: { type: 'noData', seconds: NO_DATA_SECONDS }, severity: 'critical' })).rule.id);
    }
    assert.equal(new Set(threshold.map((id) => id % 16)).size, 16);
    assert.equal(new Set(noData.map((id) => id % 16)).size, 16);
    await sleep(2_500); // every node has read the rules (its index is checked against the database every 2 s)

    // load: every write moves each threshold pair (raise, clear, raise...), so the evaluating nodes take shard locks
    // all the time; most writes go to C. C is killed once it is seen holding one.
    let loading = true;
    const load = (async () => {
      for (let n = 0; loading; n++) {
        const r = await write([cc, cc, ca, cb][n % 4], n % 2 === 0 ? 100 : 0);
        if (r.status === 0) await sleep(5); // C is gone
      }
    })();
    const heldByC = async () => (await check.get(sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND s.application_name = 'gk-alarms-c'`))!.n;
    let seen = 0;
    for (let i = 0; i < 2000 && seen === 0; i++) seen = await heldByC();
    assert.ok(seen > 0, 'node C was seen holding a rule shard\'s lock');
    await kill9(c);
    const killedAt = Date.now();
    await sleep(300);
    loading = false;
    await load;
    // the dead node's connections are gone, and its locks with them
    for (let i = 0; i < 100 && await heldByC() > 0; i++) await sleep(50);
    assert.equal(await heldByC(), 0);

    const openPairs = async (ruleIds: number[]) => check.all(sql<{ rule_id: number; device_id: number; n: number; start_at: string }>`
      SELECT rule_id, device_id, count(*)::int AS n, max(start_at) AS start_at FROM alarms
      WHERE clear_at IS NULL AND rule_id = ANY(${ruleIds}) GROUP BY rule_id, device_id`);
    const waitFor = async (what: string, done: () => Promise<boolean>, ms: number) => {
      const until = Date.now() + ms;
      while (!(await done())) {
        if (Date.now() > until) assert.fail(`${what} within ${ms / 1000} s`);
        await sleep(100);
      }
    };
    // the survivors clear every threshold alarm (each shard, C's ones too), then raise each again once
    assert.equal((await write(ca, 0)).status, 204);
    await waitFor('every threshold alarm cleared', async () => (await openPairs(threshold)).length === 0, 20_000);
    assert.equal((await write(cb, 100)).status, 204);
    const breachAt = clock;
    await waitFor('every threshold pair raised again', async () => (await openPairs(threshold)).length === RULES * DEVICES, 20_000);
    const raised = await openPairs(threshold);
    assert.ok(raised.every((r) => r.n === 1 && Number(r.start_at) === breachAt), JSON.stringify(raised.slice(0, 4)));
    // no writes any more: the survivors' timers raise each no-data pair once, in every shard
    await waitFor('every no-data pair raised', async () => (await openPairs(noData)).length === RULES * DEVICES, (NO_DATA_SECONDS + 12) * 1000);
    await sleep(2_500); // a few more ticks on both survivors: nothing is raised twice
    const quiet = await openPairs(noData);
    assert.equal(quiet.length, RULES * DEVICES);
    assert.ok(quiet.every((r) => r.n === 1), JSON.stringify(quiet.filter((r) => r.n !== 1)));
    const noDataRows = await check.get(sql<{ n: number }>`SELECT count(*)::int AS n FROM alarms WHERE rule_id = ANY(${noData})`);
    assert.equal(noDataRows!.n, RULES * DEVICES, 'no no-data alarm was raised while the points flowed');

    // one event per transition: alarm.raised per alarm row, alarm.cleared per alarm that the rule ended
    const counts = await check.get(sql<{ alarms: number; ended: number; raised: number; cleared: number }>`SELECT
      (SELECT count(*)::int FROM alarms) AS alarms, (SELECT count(*)::int FROM alarms WHERE clear_at IS NOT NULL) AS ended,
      (SELECT count(*)::int FROM events WHERE type = 'alarm.raised') AS raised, (SELECT count(*)::int FROM events WHERE type = 'alarm.cleared') AS cleared`);
    assert.deepEqual(counts, { alarms: counts!.alarms, ended: counts!.ended, raised: counts!.alarms, cleared: counts!.ended });
    // no two alarms of one pair overlap in time (each was raised once, while no other was open)
    const overlaps = await check.get(sql<{ n: number }>`SELECT count(*)::int AS n FROM alarms x JOIN alarms y
      ON x.rule_id = y.rule_id AND x.device_id = y.device_id AND x.id < y.id AND y.raised_at < coalesce(x.clear_at, 9e15)`);
    assert.equal(overlaps!.n, 0);
    const survivors = [...serverErrors(a), ...serverErrors(b)];
    assert.deepEqual(survivors, []);
    assert.ok(killedAt > 0);
  });
});
