// Staged telemetry writes on a SQLite file (src/telemetry/staging.ts): a write stores its points in telemetry_staged
// and the fold worker, a thread with its own connection, moves them into the shard tables. What must hold: the shard
// tables end exactly as direct writes leave them (re-writes field by field, strings, exact integers), a read sees every
// acknowledged point, nothing staged is lost across a restart, prune drops the staged points of the tables it drops,
// and a worker that cannot start costs nothing but speed.
//
// The worker is held off where a test needs staged rows to stay staged: the main thread takes the file's write lock
// (re-entrant for the main thread, so its own writes and reads go on; the worker waits).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { T0 } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { openDatabase, type Db, type SqliteConnection } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { addonFile } from '../../src/db/native.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { writeLineProtocol } from '../../src/telemetry/ingest.ts';
import { runQueries } from '../../src/telemetry/execute.ts';
import { resultsJson } from '../../src/telemetry/query/result.ts';
import { pruneShards } from '../../src/telemetry/telemetry.store.ts';
import { setFoldWorkerIdle, stagedEntries, stagingOf, startStaging } from '../../src/telemetry/sqlite/staging.ts';
import { sealDue } from '../../src/telemetry/seal.ts';
import type { QueryBody } from '../../src/telemetry/telemetry.schemas.ts';
import { FROM_V1, countPoints, countRows, fixtureUser, iso, ns, tableNames } from './fixtures.ts';

const DAY = 86_400_000;
const namespace = { version: '1' as const, database: 'energy', retentionPolicy: 'autogen' };

interface FileDb {
  db: Db;
  conn: SqliteConnection;
  file: string;
  userId: number;
  write(body: string): Promise<number>;
  read(body: QueryBody): Promise<string>;
}

type Test = { after(fn: () => unknown): void };
const opened = new WeakMap<Test, Db[]>();

/** A directory of its own for the test's database files: removed after the test, once they are closed. */
function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'gk-staging-'));
  t.after(async () => {
    for (const db of opened.get(t) ?? []) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** The database file, migrated, with a user who may write n1; `addon`: the addon a fold worker loads (none: no worker). */
async function open(t: Test, file: string, addon: string | undefined, userId?: number): Promise<FileDb> {
  const db = openDatabase({ file, addonFile: addon });
  opened.set(t, [...opened.get(t) ?? [], db]);
  await migrate(db, T0);
  const user = userId ?? await fixtureUser(db, 'n1');
  const conn = await db.exclusive((c) => c);
  return {
    db, conn, file, userId: user,
    write: (body) => writeLineProtocol(db, { userId: user, namespace, body: [body], precision: 'ns', now: T0 }),
    read: async (body) => resultsJson(await runQueries(db, user, body, T0), true),
  };
}

const stagedCount = (h: FileDb) => countRows(h.db, 'telemetry_staged');

/** The rows of every shard table, by table, in key order. */
async function shardContents(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of await tableNames(db)) {
    out[table] = await db.all(sql`SELECT * FROM ${sql.table(table)} ORDER BY series_id, t_ms, t_ns`);
  }
  return out;
}

async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Writes that exercise every way a row is merged: fields a line lacks, a re-write of some fields of a point, strings,
// booleans, an integer beyond 2^53, an unsigned one, a second series and shard, and groups of more than one entry.
const BODIES = [
  [
    `power,nodeId=n1 a=1.5,b=2i,s="x",ok=true,u=5u ${ns(T0 - 60_000)}`,
    `power,nodeId=n1 a=2.5 ${ns(T0 - 30_000)}`,
    `power,nodeId=n1,phase=L1 a=3,b=-4i ${ns(T0 - 60_000)}`,
    `power,nodeId=n1 a=0.25 ${ns(T0 - 2 * DAY)}`,
  ].join('\n'),
  [
    `power,nodeId=n1 b=9223372036854775807i ${ns(T0 - 60_000)}`,
    `power,nodeId=n1 s="y \\"quoted\\"",ok=false ${ns(T0 - 30_000)}`,
    `power,nodeId=n1 a=7 ${ns(T0 - 10_000)}`,
  ].join('\n'),
  Array.from({ length: 3000 }, (_, i) => [
    `power,nodeId=n1 a=${i}.5,b=${i}i ${ns(T0 - DAY + i * 1000)}`,
    `power,nodeId=n1,phase=L1 a=${-i} ${ns(T0 - DAY + i * 1000)}`,
  ].join('\n')).join('\n'),
  // the same keys again, one field each, out of order
  Array.from({ length: 50 }, (_, i) => `power,nodeId=n1 b=${1000 + i}i ${ns(T0 - DAY + (2999 - i * 7) * 1000)}`).join('\n'),
];

const ALL: QueryBody = { select: ['a', 'b', 's', 'ok', 'u'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 3 * DAY }] } };

describe('telemetry: staged writes and the fold worker (SQLite)', {
  skip: testBackend() !== 'sqlite' && 'staging is the SQLite engine\'s (PostgreSQL stores the rows of a write in its transaction)',
}, () => {
  it('staged points end in the shard tables exactly as direct writes leave them, and a read sees them all', async (t) => {
    const dir = tempDir(t);
    const staged = await open(t, join(dir, 'staged.db'), addonFile(join(dir, '.native')));
    const direct = await open(t, join(dir, 'direct.db'), undefined);
    assert.equal((await staged.db.exclusive((c) => stagingOf(c)))?.active, true, 'a fold worker started');
    const lock = staged.conn.file!.writeLock;
    lock.hold(); // the worker waits: every point stays staged until a read
    try {
      for (const body of BODIES) {
        assert.equal(await staged.write(body), await direct.write(body));
      }
      assert.ok(await stagedCount(staged) >= 4, `staged entries: ${await stagedCount(staged)}`);
      assert.equal(await countPoints(staged.db), 0, 'nothing in the shard tables yet');
      // a read folds everything first (on the main thread, which holds the lock)
      assert.equal(await staged.read(ALL), await direct.read(ALL));
      assert.equal(await stagedCount(staged), 0);
    } finally {
      lock.release();
    }
    const contents = await shardContents(staged.db);
    assert.deepEqual(Object.keys(contents), Object.keys(await shardContents(direct.db)));
    assert.deepEqual(contents, await shardContents(direct.db));
    assert.equal(await countPoints(staged.db), 4 + 1 + 6000, 'points: the re-writes merged into existing rows');
    const big = await staged.db.get(sql<{ b: bigint | number; s: string }>`SELECT CAST(c1 AS TEXT) AS b, c2 AS s FROM ${sql.table(Object.keys(contents).at(-1)!)}
      WHERE t_ms = ${T0 - 60_000} AND series_id = 1`);
    assert.deepEqual(big, { b: '9223372036854775807', s: 'x' }, 'an integer beyond 2^53 exact, the string kept where not re-written');
  });

  it('the worker folds while writes, reads and other writes go on: every acknowledged point is read back', async (t) => {
    const dir = tempDir(t);
    const h = await open(t, join(dir, 'gridkeeper.db'), addonFile(join(dir, '.native')));
    const writes = Array.from({ length: 10 }, (_, w) =>
      Array.from({ length: 2000 }, (_, i) => `power,nodeId=n1,w=w${w} a=${w * 10_000 + i} ${ns(T0 - DAY + i * 1000)}`).join('\n'));
    const sums: QueryBody = { select: [{ field: 'a', function: 'sum' }], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }] } };
    const others = Array.from({ length: 40 }, (_, i) => h.db.write((tx) => tx.run(sql`UPDATE devices SET last_update = ${i}`)));
    const answers = await Promise.all([...writes.map((body) => h.write(body)), ...others]);
    assert.deepEqual(answers.slice(0, 10), Array(10).fill(2000));
    // each series' sum, read right after the last acknowledgement: w x 10,000 x 2,000 + (0 + ... + 1,999)
    const read = JSON.parse(await h.read(sums)) as { series: Array<{ tags: { w: string }; values: unknown[][] }> };
    const got = Object.fromEntries(read.series.map((s) => [s.tags.w, s.values[0][1]]));
    assert.deepEqual(got, Object.fromEntries(writes.map((_, w) => [`w${w}`, w * 10_000 * 2000 + 1999 * 2000 / 2])));
    assert.equal(await stagedCount(h), 0);
    assert.equal(await countPoints(h.db), 20_000);
    await until('the gauge at 0', () => stagedEntries(h.db.sqlite) === 0);
  });

  it('points left staged by a process that stopped are folded by the next: its worker at start, or its first read', async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'gridkeeper.db');
    const first = await open(t, file, addonFile(join(dir, '.native')));
    first.conn.file!.writeLock.hold(); // never released: the worker stops without having folded anything
    await first.write(BODIES[2]);
    const userId = first.userId;
    assert.ok(await stagedCount(first) >= 2);
    await first.db.close();

    // a service starting on the file: its worker folds the backlog without being asked
    const second = await open(t, file, addonFile(join(dir, '.native')), userId);
    assert.ok(await stagedCount(second) >= 2);
    await startStaging(second.db, createLogger('error', () => {}));
    await until('the backlog folded', async () => (await stagedCount(second)) === 0);
    assert.equal(await countPoints(second.db), 6000);
    second.conn.file!.writeLock.hold();
    await second.write(BODIES[3]);
    assert.ok(await stagedCount(second) >= 1);
    await second.db.close();

    // a process without a worker (no addon file given): its first read folds
    const third = await open(t, file, undefined, userId);
    assert.ok(await stagedCount(third) >= 1);
    const read = JSON.parse(await third.read({ select: ['b'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY + 2999_000 }] } }));
    assert.deepEqual(read.series[0].values, [[iso(T0 - DAY + 2999_000), 1000]]);
    assert.equal(await stagedCount(third), 0);
  });

  it('prune drops the staged points of the shard tables it drops, and keeps the others', async (t) => {
    const dir = tempDir(t);
    const h = await open(t, join(dir, 'gridkeeper.db'), addonFile(join(dir, '.native')));
    const lock = h.conn.file!.writeLock;
    lock.hold();
    try {
      await h.write(`power,nodeId=n1 a=1 ${ns(T0 - 3 * DAY)}\npower,nodeId=n1 a=2 ${ns(T0 - 1000)}`);
      const [old, recent] = await tableNames(h.db);
      const perTable = async () => Object.fromEntries((await h.db.all(sql<{ shard_table: string; n: number }>`SELECT shard_table, count(*) AS n
        FROM telemetry_staged GROUP BY shard_table`)).map((r) => [r.shard_table, r.n]));
      assert.deepEqual(await perTable(), { [old]: 1, [recent]: 1 });
      assert.equal(stagedEntries(h.db.sqlite), 2);
      assert.deepEqual(await pruneShards(h.db, T0 - DAY), [old]);
      assert.deepEqual(await perTable(), { [recent]: 1 });
      assert.equal(stagedEntries(h.db.sqlite), 1);
    } finally {
      lock.release();
    }
    const read = JSON.parse(await h.read({ select: ['a'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 4 * DAY }] } }));
    assert.deepEqual(read.series[0].values.map((v: unknown[]) => v[1]), [2]);
    await until('the gauge at 0', () => stagedEntries(h.db.sqlite) === 0);
  });

  it('a write folds a slice itself while the worker is 32 entries behind, then stages', async (t) => {
    const dir = tempDir(t);
    const h = await open(t, join(dir, 'gridkeeper.db'), addonFile(join(dir, '.native')));
    const lock = h.conn.file!.writeLock;
    lock.hold(); // the worker folds nothing
    try {
      for (let i = 0; i < 32; i++) await h.write(`power,nodeId=n1 a=${i} ${ns(T0 - DAY + i * 1000)}`);
      assert.equal(stagedEntries(h.db.sqlite), 32);
      assert.equal(await stagedCount(h), 32);
      assert.equal(await countPoints(h.db), 0);
      // the 33rd write first folds one slice (4,096 rows: here every entry) on the main thread
      await h.write(`power,nodeId=n1 a=99 ${ns(T0 - 1000)}`);
      assert.equal(await stagedCount(h), 1, 'only its own entry is staged');
      assert.equal(stagedEntries(h.db.sqlite), 1);
      assert.equal(await countPoints(h.db), 32);
    } finally {
      lock.release();
    }
    const read = JSON.parse(await h.read({ select: ['a'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }] } }));
    assert.deepEqual(read.series[0].values.map((v: unknown[]) => v[1]), [...Array.from({ length: 32 }, (_, i) => i), 99]);
  });

  it('an idle fold worker stops; the next write, or a sealing with a window due, starts another; nothing is lost', async (t) => {
    const before = setFoldWorkerIdle(50);
    t.after(() => setFoldWorkerIdle(before));
    const dir = tempDir(t);
    const h = await open(t, join(dir, 'gridkeeper.db'), addonFile(join(dir, '.native')));
    const direct = await open(t, join(dir, 'direct.db'), undefined);
    const staging = (await h.db.exclusive((c) => stagingOf(c)))!;
    await h.write(BODIES[0]);
    await direct.write(BODIES[0]);
    await until('the worker stopped while idle', () => staging.asleep);
    assert.equal(await stagedCount(h), 0, 'what was staged was folded first');
    assert.equal(staging.active, true, 'writes still stage');
    for (const body of BODIES.slice(1)) {
      await h.write(body);
      await direct.write(body);
    }
    assert.equal(staging.asleep, false, 'a write started a worker');
    await until('folded, and the worker stopped again', async () => staging.asleep && await stagedCount(h) === 0);
    assert.equal(await countPoints(h.db), await countPoints(direct.db));
    // a sealing pass with nothing due leaves it stopped; one with windows due starts it, and they are sealed
    await sealDue(h.db, T0 - 3 * DAY);
    assert.equal(staging.asleep, true, 'nothing due: no worker started');
    await sealDue(h.db, T0 + 3 * DAY);
    assert.equal(await countPoints(h.db), 0, 'every window sealed');
    assert.ok(await countRows(h.db, 'telemetry_blocks') > 0);
    assert.equal(await h.read(ALL), await direct.read(ALL));
    await until('stopped again after the sealing', () => staging.asleep);
    // passes that find nothing due, more often than the idle time, do not keep a started worker from stopping
    await h.write(BODIES[1]);
    assert.equal(staging.asleep, false, 'the write started a worker');
    const started = performance.now();
    while (!staging.asleep) {
      assert.ok(performance.now() - started < 10_000, 'the worker did not stop while passes kept coming');
      await sealDue(h.db, T0 + 3 * DAY);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(await stagedCount(h), 0, 'what was staged was folded first');
    // stopped for good while idle (as the database closes): writes go to the shard tables directly
    await staging.stop();
    assert.equal(staging.active, false);
    await h.write(BODIES[0]);
    assert.equal(await stagedCount(h), 0, 'nothing staged after the stop');
    assert.ok(await countPoints(h.db) > 0, 'the write is in a shard table');
  });

  it('a sealing pass that comes while an idle stop is under way waits for it, and starts no worker when nothing is due', async (t) => {
    // the idle check never fires by itself here: the test starts the stop
    const before = setFoldWorkerIdle(60_000);
    t.after(() => setFoldWorkerIdle(before));
    const dir = tempDir(t);
    const h = await open(t, join(dir, 'gridkeeper.db'), addonFile(join(dir, '.native')));
    const staging = (await h.db.exclusive((c) => stagingOf(c)))!;
    await h.write(BODIES[0]);
    await until('folded', async () => await stagedCount(h) === 0);
    const inside = staging as unknown as { lastWork: number; sleepIfIdle(): void; sleeping?: Promise<void> };
    inside.lastWork = -Infinity;
    inside.sleepIfIdle();
    assert.notEqual(inside.sleeping, undefined, 'an idle stop is under way');
    await sealDue(h.db, T0 - 3 * DAY);
    assert.equal(staging.asleep, true, 'nothing due: the pass waited for the stop and started no worker');
    await sealDue(h.db, T0 + 3 * DAY);
    assert.equal(await countPoints(h.db), 0, 'with windows due, a worker is started and seals them');
    assert.ok(await countRows(h.db, 'telemetry_blocks') > 0);
  });

  it('a fold worker that cannot start leaves writes to the shard tables: nothing is lost, later writes stage nothing', async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'gridkeeper.db');
    // not an addon: the worker fails as it loads it
    const h = await open(t, file, file);
    await h.write(BODIES[0]);
    const staging = await h.db.exclusive((c) => stagingOf(c));
    await until('the failure noticed', () => staging?.active !== true);
    await h.write(BODIES[1]);
    assert.equal(await stagedCount(h), 0, 'folded before the write, which went to the shard tables');
    const direct = await open(t, join(dir, 'direct.db'), undefined);
    await direct.write(BODIES[0]);
    await direct.write(BODIES[1]);
    assert.equal(await h.read(ALL), await direct.read(ALL));
    assert.deepEqual(await shardContents(h.db), await shardContents(direct.db));
  });
});
