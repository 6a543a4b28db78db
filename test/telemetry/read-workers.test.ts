// Heavy reads off the event loop (src/telemetry/read-workers.ts): on an SQLite file, a query request whose estimate is
// large is answered whole by the read worker — the same bytes the main thread would answer, rights included — and a
// light request meanwhile is answered on the main thread without waiting for it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/boot/app.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { addonFile } from '../../src/db/native.ts';
import { answerInWorker, answerSent, HEAVY_DATAPOINTS, readWorkerAnswers, readWorkersOn } from '../../src/telemetry/read-workers.ts';
import { runQueries } from '../../src/telemetry/execute.ts';
import { resultsJson } from '../../src/telemetry/query/result.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { sealDue } from '../../src/telemetry/seal.ts';
import { emptyPostgres, testBackend } from '../support/postgres.ts';
import { pgStatementsSent, tcpProxy } from '../support/tcp-proxy.ts';

const PASSWORD = 'read-workers-password';
const DAY = 86_400_000;
const T = Date.UTC(2026, 0, 1);
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

type Call = (method: string, path: string, body?: string | object, token?: string) => Promise<{ status: number; text: string }>;

/** An app on `db` (the service's deps and routes), its admin's token, and a user who reads n0 only. */
async function appOn(db: Db, dir: string): Promise<{ call: Call; admin: string; reader: string }> {
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: dir }, []);
  const { deps } = await createDeps({ config, db, log: createLogger('error'), now: () => T + 2 * DAY });
  const { app } = createApp(deps);
  const call: Call = async (method, path, body, token) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
    const res = await app.request(path, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) },
      { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
    return { status: res.status, text: await res.text() };
  };
  const token = async (username: string) => {
    const login = await call('POST', '/auth/login', { username, password: PASSWORD });
    assert.equal(login.status, 200, login.text);
    return (await call('GET', '/auth/accesstoken', undefined, login.text)).text;
  };
  const admin = await token('admin@localhost');
  assert.equal((await call('PUT', '/v1/user/admin@localhost/tier', { tier: 'premium' }, admin)).status, 204);
  for (let d = 0; d < 4; d++) assert.equal((await call('POST', '/v1/device?roleId=1', { properties: { nodeId: `n${d}` } }, admin)).status, 200);
  const role = JSON.parse((await call('POST', '/v1/role?parentRoleId=1', {
    manages: { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: false, alarmManagement: false },
    role: { name: 'readers', selfRights: { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false } },
  }, admin)).text).role.id;
  const member = await call('PUT', `/v1/role/${role}/member?userEmail=reader@test&password=${PASSWORD}`, {}, admin);
  assert.equal(member.status, 200, member.text);
  const monitors = await call('PUT', `/v1/role/${role}/monitors?deviceId=1`, { monitorManagement: false, reads: ['nodeId'], edits: [] }, admin);
  assert.equal(monitors.status, 200, monitors.text);
  const reader = await token('reader@test');
  assert.equal((await call('PUT', '/v1/user/reader@test/tier', { tier: 'premium' }, admin)).status, 204);
  // two days of 4 devices every 10 s, the first day sealed into blocks
  for (let day = 0; day < 2; day++) {
    for (let h = 0; h < 24; h++) {
      const lines: string[] = [];
      for (let i = 0; i < 360; i++) {
        const t = T + day * DAY + h * 3_600_000 + i * 10_000;
        for (let d = 0; d < 4; d++) lines.push(`power,nodeId=n${d} p=${((t / 10_000) % 997) / 10 + d},e=${t / 10_000}i,s="x${i % 3}" ${ns(t)}`);
      }
      const written = await call('POST', '/write?db=energy', `${lines.join('\n')}\n`, admin);
      assert.equal(written.status, 204, written.text);
    }
  }
  await sealDue(db, T + 2 * DAY);
  return { call, admin, reader };
}

describe('read workers', { skip: testBackend() === 'postgres' && 'SQLite in a file only: PostgreSQL reads are network round trips' }, () => {
  it('a heavy request is answered by the worker with the bytes the main thread answers; light ones stay here', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    const fileDb = openDatabase({ file: join(dir, 'gridkeeper.db'), addonFile: addonFile(dir) });
    const memoryDb = openDatabase({ file: ':memory:' });
    t.after(async () => { await fileDb.close(); await memoryDb.close(); rmSync(dir, { recursive: true, force: true }); });
    const inFile = await appOn(fileDb, dir);
    const inMemory = await appOn(memoryDb, dir);
    const heavy: Array<[string, string, object | undefined]> = [
      ['POST', `/query?db=energy&epoch=ms&q=${encodeURIComponent(`SELECT * FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms`)}`, undefined],
      ['POST', `/query?db=energy&q=${encodeURIComponent(`SELECT mean(p), max(e) FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms GROUP BY time(1h), nodeId`)}`, undefined],
      ['POST', '/v1/telemetry/query', [0, 1, 2, 3].map((d) => ({ select: ['p', 'e', 's'], from: { database: 'energy', retentionPolicy: 'autogen', measurement: 'power' },
        where: { tags: { nodeId: `n${d}` }, time: [{ operator: '>=', value: T + DAY / 2 }, { operator: '<', value: T + 2 * DAY }] } }))],
    ];
    for (const who of ['admin', 'reader'] as const) {
      for (const [method, path, body] of heavy) {
        const before = readWorkerAnswers();
        const got = await inFile.call(method, path, body, inFile[who]);
        assert.equal(got.status, 200, got.text);
        assert.equal(readWorkerAnswers(), before + 1, `${who} ${path}: answered by the worker`);
        const expected = await inMemory.call(method, path, body, inMemory[who]);
        assert.equal(got.text, expected.text, `${who} ${path}`);
      }
    }
    // the reader sees its one device only, through the worker as through the main thread
    const seen = JSON.parse((await inFile.call(...heavy[0], inFile.reader)).text);
    assert.deepEqual(seen.results[0].series.map((s: { values: unknown[][] }) => s.values.length), [17_280]);
    // a light request stays on the main thread
    const before = readWorkerAnswers();
    const light = await inFile.call('GET', `/query?db=energy&q=${encodeURIComponent(`SELECT last(p) FROM power WHERE nodeId = 'n1' AND time >= ${T + 2 * DAY - 3_600_000}ms`)}`, undefined, inFile.admin);
    assert.equal(light.status, 200, light.text);
    assert.equal(readWorkerAnswers(), before);
    // so does a lone last() or first() without a time range (charged for the worst-case range, read from the ends)
    for (const q of [`SELECT last(p) FROM power WHERE nodeId = 'n1'`, `SELECT first(s) FROM power GROUP BY nodeId`]) {
      const edge = await inFile.call('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, undefined, inFile.admin);
      assert.equal(edge.status, 200, edge.text);
      assert.equal(readWorkerAnswers(), before, q);
      assert.equal(edge.text, (await inMemory.call('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, undefined, inMemory.admin)).text, q);
    }
    // so does a count, sum or mean of one nodeId over the whole range (block statistics), for a reader too
    const statistics = `SELECT mean(p), count(e), sum(e) FROM power WHERE nodeId = 'n1' AND time >= ${T + DAY / 2}ms AND time < ${T + 2 * DAY}ms`;
    for (const who of ['admin', 'reader'] as const) {
      const got = await inFile.call('GET', `/query?db=energy&q=${encodeURIComponent(statistics)}`, undefined, inFile[who]);
      assert.equal(got.status, 200, got.text);
      assert.equal(readWorkerAnswers(), before, `${who}: ${statistics}`);
      assert.equal(got.text, (await inMemory.call('GET', `/query?db=energy&q=${encodeURIComponent(statistics)}`, undefined, inMemory[who])).text);
    }
    assert.equal(JSON.parse((await inFile.call('GET', `/query?db=energy&q=${encodeURIComponent(statistics)}`, undefined, inFile.admin)).text)
      .results[0].series[0].values[0][2], 12_960);
    // and with a field filter it reads points: the worker answers
    const filtered = await inFile.call('GET', `/query?db=energy&q=${encodeURIComponent(`SELECT last(p) FROM power WHERE p > 1`)}`, undefined, inFile.admin);
    assert.equal(filtered.status, 200, filtered.text);
    assert.equal(readWorkerAnswers(), before + 1);
    // as do the same statistics of every nodeId, per window of time, or of a string field
    for (const q of [`SELECT mean(p) FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms GROUP BY nodeId`,
      `SELECT mean(p) FROM power WHERE nodeId = 'n1' AND time >= ${T}ms AND time < ${T + 2 * DAY}ms GROUP BY time(1h)`,
      `SELECT count(s) FROM power WHERE nodeId = 'n1' AND time >= ${T}ms AND time < ${T + 2 * DAY}ms`]) {
      const at = readWorkerAnswers();
      const got = await inFile.call('GET', `/query?db=energy&q=${encodeURIComponent(q)}`, undefined, inFile.admin);
      assert.equal(got.status, 200, got.text);
      assert.equal(readWorkerAnswers(), at + 1, q);
    }
  });

  it('the worker sees measurements, fields and series written after its first answer', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    const fileDb = openDatabase({ file: join(dir, 'gridkeeper.db'), addonFile: addonFile(dir) });
    t.after(async () => { await fileDb.close(); rmSync(dir, { recursive: true, force: true }); });
    const { call, admin } = await appOn(fileDb, dir);
    const heavy = (q: string) => `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`;
    const all = `SELECT * FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms GROUP BY *`;
    let before = readWorkerAnswers();
    const first = JSON.parse((await call('POST', heavy(all), undefined, admin)).text);
    assert.equal(readWorkerAnswers(), before + 1);
    assert.deepEqual(first.results[0].series[0].columns, ['time', 'e', 'p', 's']);
    // after the worker's first answer, into a window whose shard table exists (no schema change): a new series (a tag
    // never written) with a new field of power, and a new measurement
    const at = T + DAY + 3_600_000;
    const written = await call('POST', '/write?db=energy', `power,nodeId=n0,phase=l1 p=1,q=2 ${ns(at)}\nbattery,nodeId=n0 soc=55 ${ns(at)}\n`, admin);
    assert.equal(written.status, 204, written.text);
    before = readWorkerAnswers();
    const again = JSON.parse((await call('POST', heavy(all), undefined, admin)).text);
    const battery = JSON.parse((await call('POST', heavy(`SELECT * FROM battery WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms AND nodeId = 'n0'`), undefined, admin)).text);
    assert.equal(readWorkerAnswers(), before + 2, 'both answered by the worker');
    const phase = again.results[0].series.find((s: { tags: Record<string, string> }) => s.tags.phase === 'l1');
    assert.ok(phase !== undefined, 'the new series is in the answer');
    assert.deepEqual(phase.columns, ['time', 'e', 'p', 'q', 's']);
    assert.deepEqual(phase.values, [[at, null, 1, 2, null]]);
    assert.deepEqual(battery.results[0].series[0].values, [[at, 'n0', 55]]);
  });

  it('a sent answer\'s buffer goes back to the worker, which writes its next answers into it', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    const fileDb = openDatabase({ file: join(dir, 'gridkeeper.db'), addonFile: addonFile(dir) });
    t.after(async () => { await fileDb.close(); rmSync(dir, { recursive: true, force: true }); });
    await appOn(fileDb, dir);
    const nowMs = T + 2 * DAY;
    const body = (fromMs: number) => ({ select: ['p', 'e', 's'], from: { database: 'energy', retentionPolicy: 'autogen', measurement: 'power' },
      where: { tags: { nodeId: 'n0' }, time: [{ operator: '>=', value: fromMs }, { operator: '<', value: nowMs }] } });
    const inWorker = async (fromMs: number) => {
      const bytes = await answerInWorker(fileDb, HEAVY_DATAPOINTS, { kind: 'json', userId: 1, body: body(fromMs), nowMs });
      assert.ok(bytes !== undefined, 'answered by the worker');
      const text = new TextDecoder().decode(bytes);
      assert.equal(text, resultsJson(await runQueries(fileDb, 1, body(fromMs) as never, nowMs), true), 'what the main thread answers');
      return { bytes, text };
    };
    const big = await inWorker(T);
    assert.equal(JSON.parse(big.text).series[0].values.length, 17_280);
    const size = big.bytes.buffer.byteLength;
    answerSent(big.bytes);
    assert.equal(big.bytes.buffer.byteLength, 0, 'handed back: no longer this thread\'s');
    const small = await inWorker(T + DAY);
    assert.equal(JSON.parse(small.text).series[0].values.length, 8_640);
    assert.equal(small.bytes.buffer.byteLength, size, 'written into the buffer handed back');
    assert.ok(small.bytes.byteLength < size);
    // no buffer was handed back since: a new one, of the answer's size
    const other = await inWorker(T + DAY / 2);
    assert.equal(other.bytes.buffer.byteLength, other.bytes.byteLength);
    // a string or bytes not from a worker are left alone
    const mine = new TextEncoder().encode('{}');
    answerSent(mine);
    answerSent('{}');
    assert.equal(mine.buffer.byteLength, 2);
  });

  it('a light request is answered while a heavy one is still being read in the worker', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    const fileDb = openDatabase({ file: join(dir, 'gridkeeper.db'), addonFile: addonFile(dir) });
    t.after(async () => { await fileDb.close(); rmSync(dir, { recursive: true, force: true }); });
    const app = await appOn(fileDb, dir);
    const order: string[] = [];
    const heavyQuery = `SELECT * FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms`;
    const heavy = Promise.all([1, 2, 3].map(() => app.call('GET', `/query?db=energy&q=${encodeURIComponent(heavyQuery)}`, undefined, app.admin)))
      .then((all) => { order.push('heavy'); return all; });
    const light = app.call('GET', `/query?db=energy&q=${encodeURIComponent(`SELECT last(p) FROM power WHERE nodeId = 'n1' AND time >= ${T + 2 * DAY - 3_600_000}ms`)}`, undefined, app.admin)
      .then((r) => { order.push('light'); return r; });
    const [all, one] = await Promise.all([heavy, light]);
    for (const r of [...all, one]) assert.equal(r.status, 200, r.text);
    assert.deepEqual(order, ['light', 'heavy']);
  });
});

describe('read workers on PostgreSQL', { skip: testBackend() !== 'postgres' && 'PostgreSQL: the SQLite workers are tested above' }, () => {
  it('a service\'s heavy requests are answered by its worker, with its own pool, as the main thread answers them', async (t) => {
    const database = await emptyPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    const db = openPostgres({ url: database.url, poolSize: 4 });
    t.after(async () => { await db.close(); await database.drop(); rmSync(dir, { recursive: true, force: true }); });
    const app = await appOn(db, dir);
    const heavy: Array<[string, string, object | undefined]> = [
      ['POST', `/query?db=energy&epoch=ms&q=${encodeURIComponent(`SELECT * FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms`)}`, undefined],
      ['POST', `/query?db=energy&q=${encodeURIComponent(`SELECT mean(p), max(e) FROM power WHERE time >= ${T}ms AND time < ${T + 2 * DAY}ms GROUP BY time(1h), nodeId`)}`, undefined],
      ['POST', '/v1/telemetry/query', [0, 1, 2, 3].map((d) => ({ select: ['p', 'e', 's'], from: { database: 'energy', retentionPolicy: 'autogen', measurement: 'power' },
        where: { tags: { nodeId: `n${d}` }, time: [{ operator: '>=', value: T + DAY / 2 }, { operator: '<', value: T + 2 * DAY }] } }))],
    ];
    const answers = async () => {
      const out: string[] = [];
      for (const who of ['admin', 'reader'] as const) {
        for (const [method, path, body] of heavy) {
          const got = await app.call(method, path, body, app[who]);
          assert.equal(got.status, 200, got.text);
          out.push(got.text);
        }
      }
      return out;
    };
    const here = await answers();
    let before = readWorkerAnswers();
    assert.deepEqual(await answers(), here, 'without readWorkersOn, the main thread answers');
    assert.equal(readWorkerAnswers(), before);
    const stop = readWorkersOn(db, database.url);
    try {
      before = readWorkerAnswers();
      assert.deepEqual(await answers(), here, 'the worker answers what the main thread answers, rights included');
      assert.equal(readWorkerAnswers(), before + here.length, 'every heavy request went to the worker');
    } finally {
      await stop();
    }
    before = readWorkerAnswers();
    assert.deepEqual(await answers(), here, 'stopped: the main thread answers again');
    assert.equal(readWorkerAnswers(), before);
  });

  it('a light InfluxQL request is charged on the kept catalogue and read in one snapshot, rights checked inside it', async (t) => {
    const database = await emptyPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'gk-readers-'));
    // what every connection of the node sends
    const { statements: sent, sent: observe } = pgStatementsSent();
    const target = new URL(database.url);
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, observe);
    const via = new URL(database.url);
    via.host = `127.0.0.1:${proxy.port}`;
    const db = openPostgres({ url: via.toString(), poolSize: 4 });
    t.after(async () => { await db.close(); await proxy.close(); await database.drop(); rmSync(dir, { recursive: true, force: true }); });
    const app = await appOn(db, dir);
    // with read workers, an InfluxQL request's first attempt only plans (a heavy one is answered in the worker)
    const stop = readWorkersOn(db, database.url);
    t.after(stop);
    const light = `/query?db=energy&epoch=ms&q=${encodeURIComponent(`SELECT last(p) FROM power WHERE nodeId = 'n0' AND time >= ${T + 2 * DAY - 3_600_000}ms`)}`;
    const expected = await app.call('POST', light, undefined, app.admin);
    assert.equal(expected.status, 200, expected.text);
    assert.match(expected.text, /"last"\],"values":\[\[/);
    // telemetry read snapshots (reads.ts), not another part of the service's reads that may run meanwhile
    const snapshots = () => sent.filter((text) => text.startsWith('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY') && text.includes('telemetry_sealed'));
    for (const who of ['admin', 'reader', 'reader'] as const) {
      sent.length = 0;
      const got = await app.call('POST', light, undefined, app[who]);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.text, expected.text);
      assert.equal(snapshots().length, 1, `${who}: one read snapshot, none to plan the charge\n${sent.join('\n')}`);
    }
    // n1, which the reader may not read, has points; the reader gets none of them, from one snapshot too
    assert.match((await app.call('POST', light.replace('n0', 'n1'), undefined, app.admin)).text, /"last"\],"values":\[\[/);
    sent.length = 0;
    const refused = await app.call('POST', light.replace('n0', 'n1'), undefined, app.reader);
    assert.equal(refused.status, 200, refused.text);
    assert.equal(refused.text, '{"results":[{"statement_id":0}]}');
    assert.equal(snapshots().length, 1, sent.join('\n'));
  });
});
