// Staged telemetry writes on PostgreSQL (src/telemetry/pg/pg-staging.ts): a write stores its points in
// telemetry_staged and a node folds them into the shard tables in the background. What must hold: the points end in
// their shard tables exactly as written (re-writes field by field, later request wins, exact integers and strings), a
// read on any node sees every acknowledged point, staged rows left behind by a node that stopped are folded by the
// next read, prune takes the staged points of the tables it drops, a writer whose shard was dropped behind it writes
// it again, and writes wait when too much is staged.
//
// The folding is held off where a test needs points to stay staged: a transaction holds the namespace's fold lock
// (the folder and every read's settle wait for it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, T0, type TestApp } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import type { Db } from '../../src/db/open.ts';
import { FOLD_LOCK, MAX_BACKLOG, VACUUM_EVERY } from '../../src/telemetry/pg/pg-staging.ts';
import { stagedRowGroup, takeStaged } from '../../src/telemetry/pg/pg-seal-staged.ts';
import fc from 'fast-check';
import { pruneShards } from '../../src/telemetry/telemetry.store.ts';
import { FROM_V1, ns, queryOk, write, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const skip = testBackend() !== 'postgres' && 'PostgreSQL only (the SQLite backend stages in a file: staging.test.ts)';

/**
 * Holds the fold lock of the (only) namespace until the returned function is called, or for 20 s at most (a test that
 * fails while holding it must not leave its app's pool waiting for ever).
 */
async function holdFolds(db: Db): Promise<() => Promise<void>> {
  const { id } = (await db.get(sql<{ id: number }>`SELECT id FROM telemetry_namespaces`))!;
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let held!: () => void;
  const holding = new Promise<void>((r) => { held = r; });
  const done = db.tx(async (tx) => {
    await tx.get(sql`SELECT pg_advisory_xact_lock(${FOLD_LOCK}::integer, ${id}::integer)`);
    held();
    await Promise.race([released, new Promise((r) => setTimeout(r, 20_000).unref())]);
  });
  await holding;
  return async () => { release(); await done; };
}

async function staged(db: Db): Promise<{ rows: number; batches: number; points: number }> {
  const r = (await db.get(sql<{ rows: number; batches: number; points: number | null }>`SELECT count(*) AS rows, count(DISTINCT batch) AS batches,
    sum(points) AS points FROM telemetry_staged`))!;
  return { rows: r.rows, batches: r.batches, points: r.points ?? 0 };
}

/** Waits (up to 10 s) until the background folder has left nothing staged. */
async function folded(db: Db): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await staged(db)).rows === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('the staged points were not folded within 10 s');
}

/** Points in the shard tables, read directly (no settle). */
async function shardPoints(db: Db): Promise<number> {
  let n = 0;
  for (const { table_name: t } of await db.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards`)) {
    n += (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.id(t)}`))!.n;
  }
  return n;
}

async function stagedGauge(app: TestApp): Promise<number> {
  const res = await app.request('GET', '/metrics');
  const m = /^gridkeeper_telemetry_staged_entries (\d+)/m.exec(res.text);
  assert.ok(m, 'the gauge is exported');
  return Number(m[1]);
}

const rowsOf = (body: { series?: Array<{ values: unknown[][] }> }) => (body.series ?? []).flatMap((s) => s.values);

describe('telemetry write on PostgreSQL: staged, then folded', { skip }, () => {
  it('a write stages its points in its transaction; the folder moves them into their shard tables, values exact', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1', 'n2');
    await writeOk(app, u.token, `power,nodeId=n1 a=0.5 ${ns(T0 - 5000)}`);
    await folded(db);
    assert.equal(await shardPoints(db), 1);

    const release = await holdFolds(db);
    const lines = [
      `power,nodeId=n1 a=2.5e-300,b=-9223372036854775808i,c="quote \\" and \\\\ back, ünï",d=true,e=9223372036854775807u ${ns(T0 - 1000)}`,
      `power,nodeId=n1 a=1.25 ${ns(T0 - 2 * DAY)}`, // another shard window
      `state,nodeId=n1 on=false ${ns(T0 - 1000)}`, // another measurement
      // a second series between the first one's points (runs of series ids), one point with a sub-millisecond time
      `power,nodeId=n2 a=8 ${BigInt(T0 - 3000) * 1_000_000n + 123_456n}`,
      `power,nodeId=n2 a=9 ${ns(T0 - 2000)}`,
      `power,nodeId=n1 a=6 ${ns(T0 - 1500)}`,
    ];
    await writeOk(app, u.token, lines.join('\n'));
    const held = await staged(db);
    assert.equal(held.batches, 1, 'one request, one batch');
    assert.equal(held.rows, 3, 'one staged row per shard table and measurement');
    assert.equal(held.points, 6);
    assert.deepEqual(await db.get(sql`SELECT array(SELECT s.node_id FROM unnest(st.series_ids) WITH ORDINALITY AS u(id, o) JOIN telemetry_series s ON s.id = u.id
      ORDER BY u.o)::text AS nodes, st.t_ns::text AS ns FROM telemetry_staged st WHERE cardinality(st.t_ms) = 4`),
      { nodes: '{n1,n1,n2,n2}', ns: '{0,0,123456,0}' }, 'the rows in key order');
    assert.equal(await shardPoints(db), 1, 'nothing in the shard tables yet');
    assert.equal(await stagedGauge(app), 1);
    await release();
    await folded(db);
    assert.equal(await shardPoints(db), 7);
    assert.deepEqual(await db.all(sql`SELECT s.node_id, p.t_ms - ${T0} AS t, p.t_ns, p.c0f AS a FROM ${sql.id((await db.get(sql<{ t: string }>`SELECT table_name AS t FROM telemetry_shards ORDER BY shard_window DESC LIMIT 1`))!.t)} p
      JOIN telemetry_series s ON s.id = p.series_id WHERE s.measurement = 'power' ORDER BY s.node_id, p.t_ms, p.t_ns`), [
      { node_id: 'n1', t: -5000, t_ns: 0, a: 0.5 },
      { node_id: 'n1', t: -1500, t_ns: 0, a: 6 },
      { node_id: 'n1', t: -1000, t_ns: 0, a: 2.5e-300 },
      { node_id: 'n2', t: -3000, t_ns: 123_456, a: 8 },
      { node_id: 'n2', t: -2000, t_ns: 0, a: 9 },
    ]);
    assert.equal(await stagedGauge(app), 0);

    const got = await queryOk(app, u.token, { select: ['a', 'b', 'c', 'd', 'e'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 3 * DAY }] } });
    assert.deepEqual(rowsOf(got).map((r) => r.slice(1)), [
      [1.25, null, null, null, null],
      [0.5, null, null, null, null],
      [6, null, null, null, null],
      [2.5e-300, -9223372036854775808, 'quote " and \\ back, ünï', true, 9223372036854775807],
    ]);
    const newest = (await db.get(sql<{ t: string }>`SELECT table_name AS t FROM telemetry_shards ORDER BY shard_window DESC LIMIT 1`))!.t;
    const raw = await db.get(sql<{ b: string; e: string }>`SELECT c1i::text AS b, c4i::text AS e FROM ${sql.id(newest)} WHERE c1i IS NOT NULL`);
    assert.deepEqual(raw, { b: '-9223372036854775808', e: '9223372036854775807' }, 'integers exact, every digit');
  });

  it('a read on another node folds what is staged first; re-writes end field by field with the later request', async (t) => {
    const a = await makeTestApp();
    t.after(() => a.close());
    const b = await a.anotherNode();
    t.after(() => b.close());
    const u = await writer(a, 'n1');
    await writeOk(a, u.token, `power,nodeId=n1 x=0 ${ns(T0 - 60_000)}`);
    await folded(a.deps.db);
    // B has read before (it keeps the catalogue): its next read is one statement, which finds the batches staged
    const read = { select: ['x', 'y'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }] } };
    assert.deepEqual(rowsOf(await queryOk(b, await b.token(u.id), { ...read, select: ['x'] })).map((r) => r.slice(1)), [[0]]);

    const release = await holdFolds(a.deps.db);
    await writeOk(a, u.token, `power,nodeId=n1 x=1,y=1i ${ns(T0 - 2000)}\npower,nodeId=n1 x=5 ${ns(T0 - 1000)}`);
    await writeOk(a, u.token, `power,nodeId=n1 x=2 ${ns(T0 - 2000)}`); // re-writes x only
    await writeOk(a, u.token, `power,nodeId=n1 y=3i ${ns(T0 - 1000)}`); // adds y beside x
    assert.equal((await staged(a.deps.db)).batches, 3);
    // the read waits for the fold lock, then folds the three batches in order before its snapshot
    const reading = queryOk(b, await b.token(u.id), read);
    let answered = false;
    void reading.then(() => { answered = true; });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(answered, false, 'the read waited for the staged points');
    await release();
    assert.deepEqual(rowsOf(await reading).map((r) => r.slice(1)), [[0, null], [2, 1], [5, 3]]);
    assert.deepEqual(await staged(a.deps.db), { rows: 0, batches: 0, points: 0 });
  });

  it('staged rows a node left behind (stopped before folding) are folded by the next read of another node', async (t) => {
    const a = await makeTestApp();
    t.after(() => a.close());
    const db = a.deps.db;
    const u = await writer(a, 'n1');
    await writeOk(a, u.token, `power,nodeId=n1 x=0 ${ns(T0 - 60_000)}`);
    await folded(db);
    const release = await holdFolds(db);
    await writeOk(a, u.token, Array.from({ length: 50 }, (_, k) => `power,nodeId=n1 x=${k + 1} ${ns(T0 - 50_000 + k * 1000)}`).join('\n'));
    await db.script('CREATE TABLE kept_staged AS SELECT * FROM telemetry_staged');
    await release();
    await folded(db);
    // as if the node had stopped after its answer: the points staged again, none in the shard table
    const table = (await db.get(sql<{ t: string }>`SELECT table_name AS t FROM telemetry_shards`))!.t;
    await db.run(sql`DELETE FROM ${sql.id(table)} WHERE t_ms >= ${T0 - 50_000}`);
    await db.script('INSERT INTO telemetry_staged SELECT * FROM kept_staged; DROP TABLE kept_staged');
    assert.equal(await shardPoints(db), 1);

    const b = await a.anotherNode();
    t.after(() => b.close());
    const got = await queryOk(b, await b.token(u.id), { select: ['x'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }] } });
    assert.deepEqual(rowsOf(got).map((r) => r[1]), Array.from({ length: 51 }, (_, k) => k));
    assert.equal((await staged(db)).rows, 0);
    assert.equal(await shardPoints(db), 51);
  });

  it('prune takes the points staged for the tables it drops; a writer whose shard was dropped behind it writes it again', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 x=1 ${ns(T0 - 10 * DAY)}\npower,nodeId=n1 x=2 ${ns(T0 - 1000)}`);
    await folded(db);
    const release = await holdFolds(db);
    await writeOk(app, u.token, `power,nodeId=n1 x=3 ${ns(T0 - 10 * DAY + 1000)}\npower,nodeId=n1 x=4 ${ns(T0 - 500)}`);
    assert.equal((await staged(db)).rows, 2);
    const dropped = await pruneShards(db, T0 - 5 * DAY);
    assert.equal(dropped.length, 1);
    const left = await db.all(sql<{ table_name: string; points: number }>`SELECT table_name, points FROM telemetry_staged`);
    assert.equal(left.length, 1, 'the staged row of the dropped table went with it');
    assert.notEqual(left[0].table_name, dropped[0]);
    await release();
    await folded(db);

    // the writer's catalogue still has the dropped shard: its staged row fails on the reference, and it runs again
    await writeOk(app, u.token, `power,nodeId=n1 x=5 ${ns(T0 - 10 * DAY + 2000)}`);
    const got = await queryOk(app, u.token, { select: ['x'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 20 * DAY }] } });
    assert.deepEqual(rowsOf(got).map((r) => r[1]), [5, 2, 4]);
  });

  it(`writes wait while ${MAX_BACKLOG} of this node's batches are not folded`, async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 x=0 ${ns(T0 - DAY)}`);
    await folded(db);
    const release = await holdFolds(db);
    for (let k = 1; k <= MAX_BACKLOG; k++) await writeOk(app, u.token, `power,nodeId=n1 x=${k} ${ns(T0 - DAY + k * 1000)}`);
    assert.equal((await staged(db)).batches, MAX_BACKLOG);
    let answered = false;
    const last = write(app, u.token, `power,nodeId=n1 x=${MAX_BACKLOG + 1} ${ns(T0 - DAY + (MAX_BACKLOG + 1) * 1000)}`).then((r) => { answered = true; return r; });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(answered, false, 'the write waits for the folder');
    assert.equal((await staged(db)).batches, MAX_BACKLOG, 'and has staged nothing yet');
    await release();
    assert.equal((await last).status, 204);
    const got = await queryOk(app, u.token, { select: ['x'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }] } });
    assert.deepEqual(rowsOf(got).map((r) => r[1]), Array.from({ length: MAX_BACKLOG + 2 }, (_, k) => k));
  });

  it(`the folder vacuums telemetry_staged every ${VACUUM_EVERY} batches (its rows die as soon as they are folded)`, async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    const vacuums = async () => (await db.get(sql<{ n: number }>`SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE relname = 'telemetry_staged'`))!.n;
    const before = await vacuums();
    for (let k = 0; k < VACUUM_EVERY; k += 25) {
      const answers = await Promise.all(Array.from({ length: 25 }, (_, j) => write(app, u.token, `power,nodeId=n1 x=${k + j} ${ns(T0 - DAY + (k + j) * 1000)}`)));
      for (const r of answers) assert.equal(r.status, 204, r.text);
    }
    await folded(db);
    for (let i = 0; i < 250 && (await vacuums()) === before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok((await vacuums()) > before, 'VACUUM ran');
    assert.equal((await staged(db)).rows, 0);
  });

  it('once everything staged is folded, the folder vacuums telemetry_staged (its pages can then go back to the file system)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    // PostgreSQL's statistics: when this table was last vacuumed by a VACUUM statement
    const lastVacuum = async () => {
      const row = await db.get(sql<{ at: number | null }>`SELECT (extract(epoch FROM last_vacuum) * 1000)::float8 AS at FROM pg_stat_user_tables WHERE relname = 'telemetry_staged'`);
      return Number(row?.at ?? 0);
    };
    // the last batch is folded after this time: a VACUUM at or after it comes once that batch is folded
    let lastWritten = 0;
    for (let b = 0; b < 30; b++) {
      const lines = Array.from({ length: 400 }, (_, k) => `power,nodeId=n1 x=${b * 1000 + k}.5,y=${k}i ${ns(T0 - DAY + (b * 400 + k) * 1000)}`);
      lastWritten = Date.now();
      const r = await write(app, u.token, lines.join('\n'));
      assert.equal(r.status, 204, r.text);
    }
    await folded(db);
    assert.equal((await staged(db)).rows, 0);
    // the folder waits at most 5 s after its previous VACUUM; the statistics are flushed a moment after
    for (let i = 0; i < 300 && (await lastVacuum()) < lastWritten; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok((await lastVacuum()) >= lastWritten, `a VACUUM once everything was folded (last: ${new Date(await lastVacuum()).toISOString()})`);
  });

  it('the arrays a write sends, kept for a straight fold, are what the server returns for its staged rows (random values)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1', 'n2', 'n3');
    await writeOk(app, u.token, `power,nodeId=n1 f=0.5 ${ns(T0 - 5000)}`);
    await folded(db);
    const float = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308));
    const integer = fc.oneof(fc.integer(), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0));
    const point = fc.record({ node: fc.constantFrom('n1', 'n2', 'n3'), ms: fc.integer({ min: 1, max: 3 * DAY }), sub: fc.integer({ min: 0, max: 999_999 }),
      f: fc.option(float), i: fc.option(integer), b: fc.option(fc.boolean()) });
    await fc.assert(fc.asyncProperty(fc.array(point, { minLength: 1, maxLength: 40 }), async (points) => {
      const lines = points.filter((p) => p.f !== null || p.i !== null || p.b !== null).map((p) => {
        const fields = [p.f === null ? '' : `f=${Object.is(p.f, -0) ? '-0' : p.f}`, p.i === null ? '' : `i=${p.i}i`, p.b === null ? '' : `b=${p.b}`].filter(Boolean);
        return `power,nodeId=${p.node} ${fields.join(',')} ${BigInt(T0 - p.ms) * 1_000_000n + BigInt(p.sub)}`;
      });
      if (lines.length === 0) return;
      const release = await holdFolds(db);
      try {
        await writeOk(app, u.token, lines.join('\n'));
        const rows = await db.all(sql<{ batch: string; part: number; table_name: string; columns: string[]; ids: Buffer; ms: Buffer; ns: Buffer; f: Buffer | null; i: Buffer | null; s: Buffer | null }>`SELECT batch::text AS batch, part, table_name, columns,
          array_send(series_ids) AS ids, array_send(t_ms) AS ms, array_send(t_ns) AS ns, array_send(f) AS f, array_send(i) AS i, array_send(s) AS s
          FROM telemetry_staged ORDER BY batch, part`);
        assert.ok(rows.length > 0);
        for (const r of rows) {
          const sent = takeStaged(db, r.batch, r.part);
          assert.ok(sent !== undefined, `the arrays of ${r.batch}/${r.part} were kept`);
          assert.deepEqual(stagedRowGroup(r.table_name, r.columns, sent), stagedRowGroup(r.table_name, r.columns, r));
        }
      } finally {
        await release();
      }
      await folded(db);
    }), { seed: 38, numRuns: 25 });
  });
});
