// Namespaces, shard tables, retention and pruning: the storage rules of docs/api.md#namespaces and issue 7.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { databaseUrl, freshPostgres, testBackend } from '../support/postgres.ts';
import { runCli } from '../../src/boot/cli.ts';
import { ConfigError, parseConfig } from '../../src/lib/config.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { migrate } from '../../src/db/migrate.ts';
import { writeLineProtocol } from '../../src/telemetry/ingest.ts';
import { planQueryRequest } from '../../src/telemetry/execute.ts';
import { runQueries } from '../../src/telemetry/execute.ts';
import { resultsJson } from '../../src/telemetry/query/result.ts';
import { pruneShards } from '../../src/telemetry/telemetry.store.ts';
import { estimateRequest } from '../../src/telemetry/cost.ts';
import { catalogueOf, shardTableName } from '../../src/telemetry/sqlite/catalogue.ts';
import { MAX_BLOCK_ROWS } from '../../src/telemetry/sqlite/block-stats.ts';
import type { QueryBody } from '../../src/telemetry/telemetry.schemas.ts';
import { FROM_V1, V1, countPoints, fixtureUser, countRows, deviceOf, iso, ns, queryOk, tableNames, userWithNodes, write, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const since = (ms: number) => ({ operator: '>=' as const, value: ms });
const before = (ms: number) => ({ operator: '<' as const, value: ms });

type ShardRow = { namespace_id: number; shard_window: number; table_name: string; start_ms: number; end_ms: number };

function shardRows(t: TestApp): Promise<ShardRow[]> {
  return t.deps.db.all(sql<ShardRow>`SELECT namespace_id, shard_window, table_name, start_ms, end_ms FROM telemetry_shards ORDER BY namespace_id, shard_window`);
}

/** The rows of each of the catalogue's tables. */
const CATALOGUE = ['telemetry_namespaces', 'telemetry_series', 'telemetry_fields', 'telemetry_shards'];
async function catalogueCounts(db: Db): Promise<number[]> {
  const counts: number[] = [];
  for (const table of CATALOGUE) counts.push(await countRows(db, table));
  return counts;
}

describe('namespaces and shards', () => {
  it('creates a namespace on first write, with the figures of its name', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const line = `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`;
    await writeOk(app, u.token, line, 'db=site&rp=raw_one_s');
    await writeOk(app, u.token, line, 'db=site&rp=avg_one_m');
    await writeOk(app, u.token, line, 'org=acme&bucket=long_one_h');
    await writeOk(app, u.token, line, 'namespace=plain');
    await writeOk(app, u.token, line, 'db=site');
    const res = await app.request('GET', '/v1/telemetry/namespaces', { token: u.token });
    assert.equal(res.status, 200);
    const figures = res.body.namespaces.map((n: any) => [n.namespace, n.expectedIntervalSeconds, n.shardDurationSeconds, n.worstCaseRangeSeconds, n.shards]);
    // ordered by key: iox/..., v1/..., v2/...
    assert.deepEqual(figures, [
      [{ version: 'IOx', value: 'plain' }, 10, 86400, 30 * 86400, 1],
      [{ version: '1', database: 'site', retentionPolicy: 'autogen' }, 10, 86400, 30 * 86400, 1],
      [{ version: '1', database: 'site', retentionPolicy: 'avg_one_m' }, 60, 7 * 86400, 400 * 86400, 1],
      [{ version: '1', database: 'site', retentionPolicy: 'raw_one_s' }, 1, 86400, 30 * 86400, 1],
      [{ version: '2', organization: 'acme', bucket: 'long_one_h' }, 3600, 90 * 86400, 3650 * 86400, 1],
    ]);
    assert.equal(res.body.namespaces[0].createdAt, iso(T0));
    assert.equal(res.body.namespaces[2].oldestShardStart, iso(Math.floor((T0 - 1000) / (7 * DAY)) * 7 * DAY));
  });

  it('lists only namespaces holding data of a device the caller may read', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await writer(app, 'a1');
    const b = await writer(app, 'b1');
    await writeOk(app, a.token, `power,nodeId=a1 p=1 ${ns(T0)}`, 'db=tenant_a');
    await writeOk(app, b.token, `power,nodeId=b1 p=1 ${ns(T0)}`, 'db=tenant_b');
    const names = async (token: string) => (await app.request('GET', '/v1/telemetry/namespaces', { token })).body.namespaces.map((n: any) => n.namespace.database);
    assert.deepEqual(await names(a.token), ['tenant_a']);
    assert.deepEqual(await names(b.token), ['tenant_b']);
    assert.deepEqual(await names(app.adminToken), []);
    const both = await userWithNodes(app, { a1: {}, b1: {} });
    assert.deepEqual(await names(both.token), ['tenant_a', 'tenant_b']);
    await assertRequiresAuth(app, 'GET', '/v1/telemetry/namespaces');
  });

  it('puts each point in the table of its (namespace, window), a pure function of both', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const week = 7 * DAY;
    // 1-day shards, 7-day shards, and points before 1970 (negative windows)
    await writeOk(app, u.token, [`power,nodeId=n1 p=1 ${ns(T0 - 1)}`, `power,nodeId=n1 p=2 ${ns(T0)}`, `power,nodeId=n1 p=3 ${ns(T0 + DAY - 1)}`].join('\n'));
    await writeOk(app, u.token, [`power,nodeId=n1 p=4 ${ns(T0)}`, `power,nodeId=n1 p=5 ${ns(T0 + week)}`].join('\n'), 'db=energy&rp=x_one_m');
    await writeOk(app, u.token, `power,nodeId=n1 p=6 -1`, 'db=old');
    assert.deepEqual((await shardRows(app)).map((r) => [r.namespace_id, r.shard_window, r.table_name, r.start_ms, r.end_ms]), [
      [1, T0 / DAY - 1, shardTableName(1, T0 / DAY - 1), T0 - DAY, T0],
      [1, T0 / DAY, shardTableName(1, T0 / DAY), T0, T0 + DAY],
      [2, Math.floor(T0 / week), shardTableName(2, Math.floor(T0 / week)), Math.floor(T0 / week) * week, Math.floor(T0 / week) * week + week],
      [2, Math.floor(T0 / week) + 1, shardTableName(2, Math.floor(T0 / week) + 1), Math.floor(T0 / week) * week + week, Math.floor(T0 / week) * week + 2 * week],
      [3, -1, 'telemetry_shard_3_m1', -DAY, 0],
    ]);
    assert.equal(shardTableName(1, 20454), 'telemetry_shard_1_20454');
    const counts: number[] = [];
    for (const table of await tableNames(app)) counts.push(await countRows(app, table));
    assert.deepEqual(counts, [1, 2, 1, 1, 1]);
  });

  it('plans a query before executing it: the estimate of docs/api.md#cost and the shard tables it scans', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [`power,nodeId=n1 p=1 ${ns(T0 - 3 * DAY)}`, `power,nodeId=n1 p=2 ${ns(T0 - DAY)}`, `power,nodeId=n1 p=3 ${ns(T0 - 1)}`].join('\n'));
    const body: QueryBody = [
      { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }] } },
      { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, limit: 5 },
      { select: ['p'], from: { ...FROM_V1, namespace: { version: '1', database: 'none', retentionPolicy: 'x' } } },
    ];
    const plan = await planQueryRequest(app.deps.db, body, T0);
    assert.deepEqual(plan.estimate, estimateRequest(body, T0));
    assert.deepEqual(plan.queries.map((q) => [q.estimate.scannedShards, q.shards.map((s) => s.window)]), [
      [2, [T0 / DAY - 1]], [30, [T0 / DAY - 3, T0 / DAY - 1]], [30, []],
    ]);
    assert.deepEqual(plan.shardTables, [shardTableName(1, T0 / DAY - 1), shardTableName(1, T0 / DAY - 3)]);
  });
});

describe('retention and pruning', () => {
  it('prune drops whole shards older than the cutoff and nothing else', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [0, 1, 2, 3].map((d) => `power,nodeId=n1 p=${d} ${ns(T0 - d * DAY - 1000)}`).join('\n'));
    assert.equal((await tableNames(app)).length, 4);
    // the shard [T0 - 2d, T0 - 1d) ends after the cutoff: kept whole
    const dropped = await pruneShards(app.deps.db, T0 - 2 * DAY + 1);
    assert.deepEqual(dropped, [shardTableName(1, T0 / DAY - 4), shardTableName(1, T0 / DAY - 3)]);
    assert.deepEqual(await tableNames(app), [shardTableName(1, T0 / DAY - 2), shardTableName(1, T0 / DAY - 1)].sort());
    assert.equal((await shardRows(app)).length, 2);
    const body = await queryOk(app, u.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series[0].values.map((r: unknown[]) => r[1]), [1, 0]);
    // writing into a pruned window creates its table again
    await writeOk(app, u.token, `power,nodeId=n1 p=9 ${ns(T0 - 3 * DAY)}`);
    assert.equal((await tableNames(app)).length, 3);
  });

  it('the retention setting drops old shards and does not store points beyond it', async (t) => {
    const app = await makeTestApp({ env: { GRIDKEEPER_TELEMETRY_RETENTION: '2d' } });
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [`power,nodeId=n1 p=1 ${ns(T0 - 3 * DAY)}`, `power,nodeId=n1 p=2 ${ns(T0 - DAY - 1)}`, `power,nodeId=n1 p=3 ${ns(T0 - 1)}`].join('\n'));
    assert.equal(await countPoints(app), 2);
    assert.equal((await tableNames(app)).length, 2);
    // a day later the shard that ended at T0 - 1 day is beyond retention, the one ending at T0 is not
    app.clock.advance(DAY);
    const body = await queryOk(app, await app.token(u.id), { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series[0].values.map((r: unknown[]) => r[1]), [3]);
    assert.deepEqual(await tableNames(app), [shardTableName(1, T0 / DAY - 1)]);
  });

  it('reads the retention setting from the environment and flags', () => {
    assert.equal(parseConfig({}, []).config.telemetryRetention, null);
    assert.equal(parseConfig({ GRIDKEEPER_TELEMETRY_RETENTION: '90d' }, []).config.telemetryRetention, 90 * DAY);
    assert.equal(parseConfig({ GRIDKEEPER_TELEMETRY_RETENTION: '90d' }, ['--telemetry-retention', '12h']).config.telemetryRetention, 12 * 3_600_000);
    assert.equal(parseConfig({}, ['--telemetry-retention=2w']).config.telemetryRetention, 14 * DAY);
    assert.equal(parseConfig({}, ['--telemetry-retention', 'off']).config.telemetryRetention, null);
    assert.throws(() => parseConfig({ GRIDKEEPER_TELEMETRY_RETENTION: '90 days' }, []), (err: unknown) =>
      err instanceof ConfigError && /GRIDKEEPER_TELEMETRY_RETENTION \/ --telemetry-retention: expected a duration/.test(err.message));
  });

  it('gridkeeper telemetry prune --older-than drops old shards of a database file', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-prune-'));
    try {
      const now = Date.now();
      const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
      t.after(() => db.close());
      await migrate(db, now);
      const userId = await fixtureUser(db, 'n1');
      const lines = [100, 95, 89, 1].map((d) => `power,nodeId=n1 p=${d} ${ns(now - d * DAY)}`).join('\n');
      await writeLineProtocol(db, { userId, namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' }, body: [lines], precision: 'ns', now });
      await db.close();
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
      assert.equal(await runCli(['telemetry', 'prune', '--older-than', '90d', '--data-dir', dir], {}, io), 0, err.join('\n'));
      assert.match(out[0], /^dropped 2 shard tables with data older than \d{4}-/);
      assert.equal(await runCli(['telemetry', 'prune', '--data-dir', dir], { GRIDKEEPER_TELEMETRY_RETENTION: '60d' }, io), 0);
      assert.match(out[1], /^dropped 1 shard table with data older than/);
      assert.equal(await runCli(['telemetry', 'prune', '--data-dir', dir], {}, io), 2);
      assert.match(err.at(-1)!, /give --older-than/);
      assert.equal(await runCli(['telemetry', 'prune', '--older-than', 'soon', '--data-dir', dir], {}, io), 2);
      assert.match(err.at(-1)!, /--older-than: expected a duration/);
      const check = openDatabase({ file: join(dir, 'gridkeeper.db') });
      t.after(() => check.close());
      assert.deepEqual(await countRows(check, 'telemetry_shards'), 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a running service notices shards pruned by another process', async (t) => {
    const { service, openOther, remove } = await sharedDatabase(t);
    try {
      const now = T0;
      await migrate(service, now);
      const userId = await fixtureUser(service, 'n1');
      const namespace = { version: '1' as const, database: 'energy', retentionPolicy: 'autogen' };
      const write = (body: string) => writeLineProtocol(service, { userId, namespace, body: [body], precision: 'ns', now });
      const read = async (): Promise<string> => {
        const body: QueryBody = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
        return resultsJson(await runQueries(service, userId, body, now), true);
      };
      await write(`power,nodeId=n1 p=1 ${ns(T0 - 3 * DAY)}\npower,nodeId=n1 p=2 ${ns(T0 - 1000)}`);
      assert.match(await read(), /\[\[.*,1\],\[.*,2\]\]/);
      // another process (gridkeeper telemetry prune) drops the old shard
      const other = openOther();
      t.after(() => other.close());
      assert.equal((await pruneShards(other, T0 - DAY)).length, 1);
      await other.close();
      assert.match(await read(), /"values":\[\["[^"]+",2\]\]/);
      await write(`power,nodeId=n1 p=3 ${ns(T0 - 3 * DAY)}`);
      assert.match(await read(), /"values":\[\["[^"]+",3\],\["[^"]+",2\]\]/);
    } finally {
      remove();
    }
  });

  it('a running service sees points written by another process into blocks whose rows it keeps', async (t) => {
    const { service, openOther, remove } = await sharedDatabase(t);
    try {
      await migrate(service, T0);
      const userId = await fixtureUser(service, 'n1');
      const namespace = { version: '1' as const, database: 'energy', retentionPolicy: 'autogen' };
      const read = async (): Promise<string> => resultsJson(await runQueries(service, userId,
        { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, orderBy: 'DESC', limit: 100 }, T0), true);
      await writeLineProtocol(service, { userId, namespace, body: [Array.from({ length: 40 }, (_, i) => `power,nodeId=n1 p=${i} ${ns(T0 - DAY + i * 60_000)}`).join('\n')], precision: 'ns', now: T0 });
      const before = await read();
      assert.equal((before.match(/\],\[/g) ?? []).length, 39);
      assert.equal(await read(), before, 'answered again alike (from the kept rows)');
      const other = openOther();
      t.after(() => other.close());
      await writeLineProtocol(other, { userId, namespace, body: [`power,nodeId=n1 p=1000 ${ns(T0 - DAY + 30_000)}`], precision: 'ns', now: T0 });
      await other.close();
      const after = await read();
      assert.equal((after.match(/\],\[/g) ?? []).length, 40);
      assert.match(after, /,1000\]/);
    } finally {
      remove();
    }
  });
});

describe('storage: rows kept per block', () => {
  it('answers equal a model of what was written, through random writes (new points, overwrites) and random ranges', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    let seed = 99;
    const rand = (n: number) => Math.floor((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 * n);
    // points of two fields over two 1-day shards, 10-minute steps; the model keeps (time -> [p, q]) as stored
    const model = new Map<number, [number | null, number | null]>();
    const span = 2 * DAY;
    const start = T0 - span;
    const writeSome = async () => {
      const lines: string[] = [];
      for (let k = 0, n = 1 + rand(30); k < n; k++) {
        const at = start + rand(span / 600_000) * 600_000 + (rand(4) === 0 ? rand(1000) : 0);
        const p = rand(3) === 0 ? null : rand(1000) / 4;
        const q = p === null || rand(2) === 0 ? rand(100) : null;
        lines.push(`power,nodeId=n1 ${[p === null ? '' : `p=${p}`, q === null ? '' : `q=${q}i`].filter(Boolean).join(',')} ${ns(at)}`);
        const old = model.get(at) ?? [null, null];
        model.set(at, [p ?? old[0], q ?? old[1]]);
      }
      await writeOk(app, u.token, lines.join('\n'));
    };
    await writeSome();
    for (let step = 0; step < 40; step++) {
      if (rand(3) === 0) await writeSome();
      const from = start + rand(span) - DAY / 4;
      const to = from + 1 + rand(span);
      const orderBy = rand(2) === 0 ? 'ASC' as const : 'DESC' as const;
      const limit = rand(3) === 0 ? 1 + rand(400) : undefined;
      const select = rand(2) === 0 ? ['p'] : ['p', 'q'];
      const expected = [...model].filter(([at, v]) => at >= from && at < to && (v[0] !== null || (select.length > 1 && v[1] !== null)))
        .sort((a, b) => (orderBy === 'ASC' ? a[0] - b[0] : b[0] - a[0]))
        .slice(0, limit ?? Infinity)
        .map(([at, v]) => [iso(at), ...v.slice(0, select.length)]);
      const time = [{ operator: '>=', value: from }, { operator: '<', value: to }];
      const body = await queryOk(app, u.token, { select, from: FROM_V1, where: { tags: { nodeId: 'n1' }, time }, orderBy, ...(limit ? { limit } : {}) });
      assert.deepEqual(body.series?.[0].values ?? [], expected, `step ${step}: ${select} [${from}, ${to}) ${orderBy} limit ${limit}`);
      // the functions over the same range: whole blocks from their statistics, the edges from kept values (floats)
      const ps = [...model].filter(([at, v]) => at >= from && at < to && v[0] !== null).map(([, v]) => v[0]!);
      const qs = [...model].filter(([at, v]) => at >= from && at < to && v[1] !== null).map(([, v]) => v[1]!);
      const fns = await queryOk(app, u.token, { select: ['sum', 'min', 'max', 'mean'].map((fn) => ({ field: 'p', function: fn })), from: FROM_V1, where: { tags: { nodeId: 'n1' }, time } });
      const ints = await queryOk(app, u.token, { select: ['sum', 'min', 'max', 'mean'].map((fn) => ({ field: 'q', function: fn })), from: FROM_V1, where: { tags: { nodeId: 'n1' }, time } });
      for (const [answer, values, what] of [[fns, ps, 'p'], [ints, qs, 'q']] as const) {
        if (values.length === 0) { assert.equal(answer.series, undefined, `step ${step}: no ${what} in range`); continue; }
        const [, sum, min, max, mean] = answer.series[0].values[0];
        const total = values.reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - total) <= 1e-9 * Math.max(1, Math.abs(total)), `step ${step}: sum(${what}) ${sum} vs ${total}`);
        assert.deepEqual([min, max], [Math.min(...values), Math.max(...values)], `step ${step}: min/max(${what})`);
        assert.ok(Math.abs(mean - total / values.length) <= 1e-9 * Math.max(1, Math.abs(total)), `step ${step}: mean(${what})`);
      }
    }
  });

  it('a block of more rows than are kept is read from the table each time, in both orders', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // 20,500 points in one hour (every 150 ms): above MAX_BLOCK_ROWS
    const hour = T0 - DAY + 3_600_000;
    assert.ok(MAX_BLOCK_ROWS < 20_500);
    for (let k = 0; k < 20_500; k += 5000) {
      await writeOk(app, u.token, Array.from({ length: Math.min(5000, 20_500 - k) }, (_, i) => `power,nodeId=n1 p=${k + i} ${ns(hour + (k + i) * 150)}`).join('\n'));
    }
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(hour - 1), before(T0)] } };
    for (let round = 0; round < 2; round++) {
      const asc = (await queryOk(app, u.token, { ...q, limit: 30 })).series[0].values;
      assert.deepEqual(asc.map((r: unknown[]) => r[1]), Array.from({ length: 30 }, (_, i) => i));
      const desc = (await queryOk(app, u.token, { ...q, orderBy: 'DESC', limit: 25_000 })).series[0].values;
      assert.equal(desc.length, 20_500);
      assert.deepEqual([desc[0][1], desc[20_499][1]], [20_499, 0]);
    }
    await writeOk(app, u.token, `power,nodeId=n1 p=-1 ${ns(hour + 75)}`);
    assert.deepEqual((await queryOk(app, u.token, { ...q, limit: 30 })).series[0].values.slice(0, 3).map((r: unknown[]) => r[1]), [0, -1, 1]);
  });
});

describe('storage: all-or-nothing', () => {
  it('a refused request leaves no namespace, series, field or shard table behind', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await deviceOf(app, 'n2');
    assertError(await write(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 5 * DAY)}\npower,nodeId=n2 q=2 ${ns(T0)}`, 'db=fresh'), 403, 'FORBIDDEN');
    assertError(await write(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 5 * DAY)}\nbad`, 'db=fresh'), 400, 'LINE_PROTOCOL');
    assert.deepEqual(await catalogueCounts(app.deps.db), [0, 0, 0, 0]);
    assert.deepEqual(await tableNames(app), []);
    // and the same request then succeeds as a first write
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 5 * DAY)}`, 'db=fresh');
    assert.deepEqual(await catalogueCounts(app.deps.db), [1, 1, 1, 1]);
  });

  it('requests running at the same time never see what a refused write added to the catalogue', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await deviceOf(app, 'n2');
    // Each refused write creates the namespace, series, fields and shard tables, then awaits the rights check and
    // rolls back; the writes and queries queued behind it take the connection as soon as its transaction ends and
    // must not use its catalogue entries.
    const db = app.deps.db;
    const namespace = { version: '1' as const, database: 'fresh', retentionPolicy: 'autogen' };
    const store = (body: string) => writeLineProtocol(db, { userId: u.id, namespace, body: [body], precision: 'ns', now: T0 });
    const refused = `power,nodeId=n1 p=1 ${ns(T0 - 5 * DAY)}\npower,nodeId=n2 q=2 ${ns(T0)}`;
    const body: QueryBody = { select: ['p'], from: { ...FROM_V1, namespace }, where: { tags: { nodeId: 'n1' } } };
    const read = async () => resultsJson(await runQueries(db, u.id, body, T0), true);
    const [a, b, c, d] = await Promise.allSettled([store(refused), store(`power,nodeId=n1 p=7 ${ns(T0 - 5 * DAY)}`), store(refused), read()]);
    assert.equal(a.status === 'rejected' && (a.reason as { code?: string }).code, 'FORBIDDEN');
    assert.deepEqual(b, { status: 'fulfilled', value: 1 });
    assert.equal(c.status === 'rejected' && (c.reason as { code?: string }).code, 'FORBIDDEN');
    assert.equal(d.status, 'fulfilled');
    assert.deepEqual(await catalogueCounts(db), [1, 1, 1, 1]);
    assert.match(await read(), /"values":\[\["[^"]+",7\]\]/);
  });

  it('a write whose COMMIT fails after its last exclusive section is noticed by the next request (the witness)', {
    skip: testBackend() !== 'sqlite' && 'the SQLite engine\'s catalogue mirror, driven through db.exclusive on a SQLite database of its own',
  }, async (t) => {
    const db = openDatabase({ file: ':memory:' });
    t.after(() => db.close());
    await migrate(db, T0);
    const namespace = { version: '1' as const, database: 'lost', retentionPolicy: 'autogen' };
    await db.exclusive((conn) => {
      const catalogue = catalogueOf(conn);
      catalogue.sync();
      // The additions roll back without the reset a failed write makes (as when its COMMIT fails).
      assert.throws(() => conn.transaction(() => {
        const info = catalogue.ensure(namespace, T0);
        catalogue.ensureSeries(info, 'power', [['nodeId', 'n1']], 'power,nodeId=n1', 1, T0);
        throw new Error('no commit');
      }), /no commit/);
      assert.notEqual(catalogue.find(namespace), undefined);
    });
    await db.exclusive((conn) => {
      const catalogue = catalogueOf(conn);
      catalogue.sync();
      assert.equal(catalogue.find(namespace), undefined);
    });
  });

  it('widens older shard tables for fields that appear later', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 a=1 ${ns(T0 - 2 * DAY)}\npower,nodeId=n1 a=2 ${ns(T0 - 1000)}`);
    await writeOk(app, u.token, `power,nodeId=n1 b=3 ${ns(T0 - 500)}`);
    // the old shard has no column for b: queries read it as absent; a write of b there widens it
    const q = { select: ['a', 'b'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    assert.deepEqual((await queryOk(app, u.token, q)).series[0].values, [[iso(T0 - 2 * DAY), 1, null], [iso(T0 - 1000), 2, null], [iso(T0 - 500), null, 3]]);
    await writeOk(app, u.token, `power,nodeId=n1 b=4 ${ns(T0 - 2 * DAY)}`);
    assert.deepEqual((await queryOk(app, u.token, q)).series[0].values[0], [iso(T0 - 2 * DAY), 1, 4]);
  });

  it('PostgreSQL: a shard table is analyzed once its writer has put 10,000 rows in it, not before', {
    skip: testBackend() !== 'postgres' && 'the planner statistics of PostgreSQL shard tables',
  }, async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const lines = (from: number, count: number) => Array.from({ length: count }, (_, i) => `power,nodeId=n1 a=${from + i} ${ns(T0 - 60_000 + from + i)}`).join('\n');
    const reltuples = async () => {
      const [shard] = await shardRows(app);
      return (await app.deps.db.get(sql<{ n: number }>`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = ${shard.table_name}`))!.n;
    };
    const analyzed = async () => {
      for (let waited = 0; waited < 10_000; waited += 50) {
        const n = await reltuples();
        if (n > 0) return n;
        await new Promise((r) => setTimeout(r, 50));
      }
      return reltuples();
    };
    await writeOk(app, u.token, lines(0, 6_000));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await reltuples(), -1, 'not analyzed after 6,000 rows');
    await writeOk(app, u.token, lines(6_000, 6_000));
    assert.equal(await analyzed(), 12_000, 'analyzed after 12,000 rows: the statistics count them');
    assert.equal((await queryOk(app, u.token, { select: ['a'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, orderBy: 'DESC', limit: 2 })).series[0].values.map((r: unknown[]) => r[1]).join(), '11999,11998');
  });

  it('keeps V1 namespaces of different databases apart', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`, V1);
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${ns(T0 - 1000)}`, 'db=energy%2Fautogen');
    const body = await queryOk(app, u.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series[0].values, [[iso(T0 - 1000), 1]]);
  });
});

/**
 * One database of the backend under test, seen by two processes: `service` (closed after the test) and, from
 * openOther, another handle of its own (a second connection to the same SQLite file, or to the same PostgreSQL
 * database). `remove` deletes the SQLite file's directory (a PostgreSQL database is dropped after the test).
 */
async function sharedDatabase(t: { after(fn: () => unknown): void }): Promise<{ service: Db; openOther(): Db; remove(): void }> {
  if (testBackend() === 'postgres') {
    const pg = await freshPostgres();
    t.after(() => pg.drop());
    return { service: pg.db, openOther: () => openPostgres({ url: databaseUrl(pg.name), poolSize: 1 }), remove: () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gk-prune-'));
  const file = join(dir, 'gridkeeper.db');
  const service = openDatabase({ file });
  t.after(() => service.close());
  return { service, openOther: () => openDatabase({ file }), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
