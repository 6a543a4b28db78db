// Block statistics on PostgreSQL (src/telemetry/pg/pg-block-stats.ts, sql/pg/0014_telemetry_block_stats.sql): an
// aggregate over whole blocks stores their count, sum, min and max with the version of the block's mark, reads them
// back while the mark keeps that version, and every fold that writes into a block gives it a new one. What must hold:
// the stored statistics are the ones answers use (a row altered in place shows in the next answer), a write into a
// block (new point or re-write) is in the very next answer, statistics computed before a fold are never stored after
// it, integers stay exact, every shard has its marks (new ones and those of a database migrated with shards), and a
// prune takes marks and statistics with its tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, T0, threeNodes, type TestApp } from '../support/app.ts';
import { emptyPostgres, testBackend } from '../support/postgres.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';
import { settleReads } from '../../src/telemetry/reads.ts';
import { blockStart, rangePieces, storeBlockStats } from '../../src/telemetry/pg/pg-block-stats.ts';
import { pruneShards } from '../../src/telemetry/telemetry.store.ts';
import { FOLD_LOCK } from '../../src/telemetry/pg/pg-staging.ts';
import { FROM_V1, ns, queryOk, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const H = 3_600_000;
const skip = testBackend() !== 'postgres' && 'PostgreSQL only (SQLite keeps block statistics in memory: aggregates.test.ts)';

interface StatsRow { table_name: string; series_id: number; col: string; block: number; version: number; n: number; sum_f: number | null; sum_i: string | null }

async function statsRows(app: TestApp): Promise<StatsRow[]> {
  return app.deps.db.all(sql<StatsRow>`SELECT table_name, series_id, col, block, version, n, sum_f, sum_i::text AS sum_i
    FROM telemetry_block_stats ORDER BY table_name, series_id, col, block`);
}

async function markOf(app: TestApp, table: string, block: number): Promise<number> {
  return (await app.deps.db.get(sql<{ version: number }>`SELECT version FROM telemetry_block_marks WHERE table_name = ${table} AND block = ${block}`))!.version;
}

/** sum, min, max and mean of field `field` over the day before T0 (one whole 1-day shard: 24 whole blocks). */
async function dayStats(app: TestApp, token: string, field = 'p'): Promise<unknown[]> {
  const select = (['sum', 'min', 'max', 'mean'] as const).map((fn) => ({ field, function: fn }));
  const body = await queryOk(app, token, { select, from: FROM_V1,
    where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }, { operator: '<', value: T0 }] } });
  return body.series[0].values[0].slice(1);
}

describe('telemetry block statistics on PostgreSQL', { skip }, () => {
  it('stores a whole block\'s statistics under its mark, answers from them, and a fold into the block replaces them', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // two points an hour, p = 1 .. 48
    await writeOk(app, u.token, Array.from({ length: 48 }, (_, k) => `power,nodeId=n1 p=${k + 1} ${ns(T0 - DAY + k * 30 * 60_000)}`).join('\n'));
    assert.deepEqual(await dayStats(app, u.token), [1176, 1, 48, 1176 / 48]);
    const rows = await statsRows(app);
    assert.equal(rows.length, 24, 'one row per block of the one series and column');
    assert.deepEqual(rows.map((r) => [r.block, r.n, r.sum_f]), Array.from({ length: 24 }, (_, b) => [b, 2, 4 * b + 3]));
    const table = rows[0].table_name;
    for (const r of rows) assert.equal(r.version, await markOf(app, table, r.block), `block ${r.block} stored under its mark's version`);

    // the answer comes from the stored rows: one altered in place (version kept) shows
    await app.deps.db.run(sql`UPDATE telemetry_block_stats SET sum_f = sum_f + 1000, max_f = 500 WHERE table_name = ${table} AND block = 3`);
    assert.deepEqual(await dayStats(app, u.token), [2176, 1, 500, 2176 / 48]);

    // a new point in block 3: the fold gives the block a new version, the altered row no longer holds
    const before = await markOf(app, table, 3);
    await writeOk(app, u.token, `power,nodeId=n1 p=100 ${ns(T0 - DAY + 3 * H + 1)}`);
    assert.deepEqual(await dayStats(app, u.token), [1276, 1, 100, 1276 / 49]);
    assert.ok(await markOf(app, table, 3) > before);
    assert.notEqual(await markOf(app, table, 4), undefined);
    const after = await statsRows(app);
    assert.deepEqual(after.filter((r) => r.block === 3).map((r) => [r.n, r.sum_f]), [[3, 115]], 'recomputed and stored again');
    // blocks the fold did not write into keep their rows (and versions)
    assert.deepEqual(after.filter((r) => r.block !== 3).map((r) => r.version), rows.filter((r) => r.block !== 3).map((r) => r.version));

    // a re-write of a stored point (the fold's upsert) is seen too
    await writeOk(app, u.token, `power,nodeId=n1 p=-5 ${ns(T0 - DAY + 10 * H)}`); // was p=21
    assert.deepEqual(await dayStats(app, u.token), [1250, -5, 100, 1250 / 49]);

    // a row staged by a node of the previous version (no first and last time), folded: the trigger reads its times
    const db = app.deps.db;
    const { id: namespaceId } = (await db.get(sql<{ id: number }>`SELECT id FROM telemetry_namespaces`))!;
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((r) => { held = r; });
    const hold = db.tx(async (tx) => {
      await tx.get(sql`SELECT pg_advisory_xact_lock(${FOLD_LOCK}::integer, ${namespaceId}::integer)`);
      held();
      await new Promise<void>((r) => { release = r; });
    });
    await holding;
    await writeOk(app, u.token, `power,nodeId=n1 p=1000 ${ns(T0 - DAY + 20 * H + 7)}`);
    assert.equal((await db.run(sql`UPDATE telemetry_staged SET first_ms = NULL, last_ms = NULL`)).changes, 1);
    const mark20 = await markOf(app, table, 20);
    release();
    await hold;
    assert.deepEqual(await dayStats(app, u.token), [2250, -5, 1000, 2250 / 50]);
    assert.ok(await markOf(app, table, 20) > mark20, 'block 20 marked from the row\'s times');
  });

  it('across nodes: statistics stored by one node give way to a point another node wrote, in the next answer of each', async (t) => {
    const [a, b] = await threeNodes(t);
    const u = await writer(a, 'n1');
    await writeOk(a, u.token, Array.from({ length: 24 }, (_, k) => `power,nodeId=n1 p=1 ${ns(T0 - DAY + k * H + 60_000)}`).join('\n'));
    assert.deepEqual(await dayStats(a, u.token), [24, 1, 1, 1]);
    assert.equal((await statsRows(a)).length, 24, 'stored by A');
    assert.deepEqual(await dayStats(b, u.token), [24, 1, 1, 1], 'B reads what A stored');
    await writeOk(b, u.token, `power,nodeId=n1 p=25 ${ns(T0 - DAY + 12 * H + 5)}`);
    assert.deepEqual(await dayStats(a, u.token), [49, 1, 25, 49 / 25], 'A sees the point B wrote (and folded)');
    assert.deepEqual(await dayStats(b, u.token), [49, 1, 25, 49 / 25]);
    await writeOk(a, u.token, `power,nodeId=n1 p=-1 ${ns(T0 - DAY + 12 * H + 5)}`); // A re-writes B's point
    assert.deepEqual(await dayStats(b, u.token), [23, -1, 1, 23 / 25]);
  });

  it('statistics computed before a fold into their block are not stored after it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - DAY + H)}`);
    await settleReads(db);
    const { table_name: table } = (await db.get(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards`))!;
    const { id: sid } = (await db.get(sql<{ id: number }>`SELECT id FROM telemetry_series`))!;
    const seen = String(await markOf(app, table, 1));
    // a read saw version `seen`; a fold then wrote into block 1
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${ns(T0 - DAY + H + 5)}`);
    await settleReads(db);
    const block = { table, col: 'c0f', sid, block: 1, n: 1, total: 1, low: 1, high: 1 };
    await storeBlockStats(db, [{ ...block, version: seen }]);
    assert.deepEqual(await statsRows(app), [], 'not stored: the mark moved on');
    // under the current version they are stored; a second store of the same key replaces them
    const now = String(await markOf(app, table, 1));
    await storeBlockStats(db, [{ ...block, version: now }, { ...block, version: now, n: 2, total: 3, high: 2 }]);
    assert.deepEqual((await statsRows(app)).map((r) => [r.block, r.n, r.sum_f]), [[1, 2, 3]]);
    // statistics of a table that no longer exists (pruned meanwhile) are dropped without an error
    await storeBlockStats(db, [{ ...block, table: 'telemetry_shard_999_1', version: now }]);
    assert.equal((await statsRows(app)).length, 1);
  });

  it('integer sums beyond 2^53 stay exact through the stored statistics', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const big = 3_000_000_000_000_000_001n; // three of them still fit an int64
    await writeOk(app, u.token, [0, 1, 2].map((k) => `power,nodeId=n1 c=${big}i ${ns(T0 - DAY + k * H)}`).join('\n'));
    const expected = [(3n * big).toString(), big.toString(), big.toString()];
    const text = async () => {
      const res = await app.request('POST', '/v1/telemetry/query', { token: u.token, body: { select: (['sum', 'min', 'max'] as const).map((fn) => ({ field: 'c', function: fn })),
        from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }, { operator: '<', value: T0 }] } } });
      assert.equal(res.status, 200, res.text);
      const m = /"values":\[\["[^"]+",(.*)\]\]/.exec(res.text);
      assert.ok(m, res.text);
      return m[1].split(",");
    };
    assert.deepEqual(await text(), expected);
    assert.deepEqual((await statsRows(app)).filter((r) => r.n > 0).map((r) => [r.col, r.sum_i]), [0, 1, 2].map(() => ['c0i', big.toString()]));
    assert.deepEqual(await text(), expected, 'the same from the stored rows');
  });

  it('a range of edges and whole blocks: pieces in time order, cut where the fold marks blocks', () => {
    const shard = { window: 0, table: 't', startMs: 1_000, endMs: 1_000 + 24 * 7 + 5, columns: 1, head: true, sealed: false }; // blocks of 7 or 8 ms
    for (let b = 0; b <= 24; b++) {
      const start = blockStart(shard, b);
      // the integer rule of the fold: floor(24 * (t - start) / (end - start))
      if (b < 24) assert.equal(Math.floor((24 * (start - shard.startMs)) / (shard.endMs - shard.startMs)), b);
      if (b > 0) assert.equal(Math.floor((24 * (start - 1 - shard.startMs)) / (shard.endMs - shard.startMs)), b - 1);
    }
    assert.deepEqual(rangePieces(shard, 1_001, 1_007), [{ block: -1, lo: 1_001, hi: 1_007 }], 'no whole block: one edge');
    assert.deepEqual(rangePieces(shard, 0, 1_000), [], 'nothing of the shard');
    const pieces = rangePieces(shard, 1_003, 1_030)!;
    assert.deepEqual(pieces.map((p) => p.block), [-1, 1, 2, 3, -1]);
    assert.deepEqual(pieces.map((p) => [p.lo, p.hi]), [[1_003, 1_008], [1_008, 1_015], [1_015, 1_022], [1_022, 1_029], [1_029, 1_030]]);
    assert.equal(pieces[0].lo, 1_003);
    assert.equal(pieces[pieces.length - 1].hi, 1_030);
    for (let i = 1; i < pieces.length; i++) assert.equal(pieces[i].lo, pieces[i - 1].hi, 'no gap, no overlap');
    assert.deepEqual(rangePieces(shard, 0, 5_000)!.map((p) => p.block), Array.from({ length: 24 }, (_, b) => b));
  });

  it('every shard has its 24 marks: made with the catalogue row, and by the migration for shards already there', async (t) => {
    const empty = await emptyPostgres();
    const db = openPostgres({ url: empty.url, poolSize: 2 });
    t.after(async () => { await db.close(); await empty.drop(); });
    const before = migrations.findIndex((m) => m.name === '0014_telemetry_block_stats');
    await migrate(db, T0, migrations.slice(0, before));
    await db.run(sql`INSERT INTO telemetry_namespaces (key, namespace, interval_ms, shard_duration_ms, worst_case_range_ms, created_at)
      VALUES ('k', '{}', 1000, ${DAY}, ${DAY}, 0)`);
    const shard = (name: string, window: number) => sql`INSERT INTO telemetry_shards (namespace_id, shard_window, table_name, start_ms, end_ms, columns, created_at)
      SELECT id, ${window}, ${name}, ${window * DAY}, ${(window + 1) * DAY}, 1, 0 FROM telemetry_namespaces`;
    await db.run(shard('telemetry_shard_1_1', 1));
    await migrate(db, T0);
    await db.run(shard('telemetry_shard_1_2', 2));
    const marks = await db.all(sql<{ table_name: string; n: number; versions: number }>`SELECT table_name, count(*)::integer AS n,
      count(DISTINCT version)::integer AS versions FROM telemetry_block_marks GROUP BY table_name ORDER BY table_name`);
    assert.deepEqual(marks, [{ table_name: 'telemetry_shard_1_1', n: 24, versions: 24 }, { table_name: 'telemetry_shard_1_2', n: 24, versions: 24 }]);
  });

  it('a prune takes the marks and statistics of the tables it drops', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [`power,nodeId=n1 p=1 ${ns(T0 - 2 * DAY + H)}`, `power,nodeId=n1 p=2 ${ns(T0 - DAY + H)}`].join('\n'));
    const body = await queryOk(app, u.token, { select: [{ field: 'p', function: 'sum' }], from: FROM_V1,
      where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }, { operator: '<', value: T0 }] } });
    assert.equal(body.series[0].values[0][1], 3);
    const tables = async () => (await app.deps.db.all(sql<{ table_name: string; marks: number; stats: number }>`SELECT s.table_name,
      (SELECT count(*)::integer FROM telemetry_block_marks m WHERE m.table_name = s.table_name) AS marks,
      (SELECT count(*)::integer FROM telemetry_block_stats b WHERE b.table_name = s.table_name) AS stats
      FROM telemetry_shards s ORDER BY s.shard_window`));
    const both = await tables();
    assert.deepEqual(both.map((r) => [r.marks, r.stats]), [[24, 24], [24, 24]]);
    await pruneShards(app.deps.db, T0 - DAY);
    assert.deepEqual(await tables(), [both[1]]);
    assert.deepEqual(await app.deps.db.all(sql`SELECT DISTINCT table_name FROM telemetry_block_marks`), [{ table_name: both[1].table_name }]);
    assert.deepEqual(await app.deps.db.all(sql`SELECT DISTINCT table_name FROM telemetry_block_stats`), [{ table_name: both[1].table_name }]);
  });
});
