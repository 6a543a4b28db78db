// Sealed telemetry (docs/api.md#telemetry-blocks): closed windows move from shard tables into compressed blocks, and
// every query form answers exactly as before — raw values to the bit, aggregates within 1e-9 — also while late points
// wait in a shard table beside a window's blocks, and after they are sealed into them. A data set written shuffled,
// with repeated points and seals in between, answers as the same set written in order and never sealed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { makeTestApp, T0, type TestApp } from '../support/app.ts';
import { sealDue, startSealing } from '../../src/telemetry/seal.ts';
import { readAttempts, settledRead } from '../../src/telemetry/reads.ts';
import { planQueries } from '../../src/telemetry/query/plan.ts';
import { resolveColumns } from '../../src/telemetry/query/columns.ts';
import type { Query } from '../../src/telemetry/telemetry.schemas.ts';
import { testBackend } from '../support/postgres.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addonFile } from '../../src/db/native.ts';
import { catalogueOf } from '../../src/telemetry/sqlite/catalogue.ts';
import { sealStagedWhenDue, stagingOf } from '../../src/telemetry/sqlite/staging.ts';
import { sealStagedWhenDuePg, settleStaged as settleStagedPg } from '../../src/telemetry/pg/pg-staging.ts';
import { FROM_V1, countPoints, countRows, ns, queryOk, tableNames, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
/** every test's data lies in the 3 days before T0 - 1 day; sealing at T0 finds them all closed */
const START = T0 - 4 * DAY;

interface Stored { app: TestApp; token: string }

async function appWith(t: { after(fn: () => Promise<void>): void }, nodes = ['n1', 'n2']): Promise<Stored> {
  const app = await makeTestApp();
  t.after(() => app.close());
  const u = await writer(app, ...nodes);
  return { app, token: u.token };
}

async function seal(s: Stored, at = T0): Promise<void> {
  await sealDue(s.app.deps.db, at);
}

async function counts(s: Stored): Promise<{ blocks: number; heads: number; sealed: number }> {
  const db = s.app.deps.db;
  const n = async (table: string) => Number((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n);
  return { blocks: await n('telemetry_blocks'), heads: await n('telemetry_shards'), sealed: await n('telemetry_sealed') };
}

interface Answers {
  /** raw points: equal to the bit */
  raw: unknown[];
  /** aggregates: floats within 1e-9 relative (sums over blocks add in another order), everything else equal */
  aggregates: unknown[];
}

/** The query forms every answer is compared on: JSON raw and aggregates, and InfluxQL over the same data. */
async function answers(s: Stored, nodes = ['n1', 'n2']): Promise<Answers> {
  const out: Answers = { raw: [], aggregates: [] };
  const range = (from: number, to: number) => [{ operator: '>=', value: from }, { operator: '<', value: to }];
  const influx = async (q: string) => {
    const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  for (const nodeId of nodes) {
    const where = (from: number, to: number) => ({ tags: { nodeId }, time: range(from, to) });
    out.raw.push(await queryOk(s.app, s.token, [
      { select: ['f', 'i', 's', 'b'], from: FROM_V1, where: where(START, T0) },
      { select: ['f', 'i'], from: FROM_V1, where: where(START + DAY / 2, START + 2 * DAY + 7), orderBy: 'DESC', limit: 50 },
      { select: ['f'], from: FROM_V1, where: where(START, T0), limit: 3 },
      { select: ['f'], from: FROM_V1, where: where(START, T0), orderBy: 'DESC', limit: 1 },
    ]));
    out.raw.push(await influx(`SELECT * FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms`));
    out.raw.push(await influx(`SELECT last(f), first(i), max(i), min(f) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms`));
    // read from the series' ends only (no time range): late points there must be merged in as anywhere else
    for (const q of [`SELECT last(f) FROM power WHERE nodeId = '${nodeId}'`, `SELECT last(i) FROM power WHERE nodeId = '${nodeId}'`,
      `SELECT first(b) FROM power WHERE nodeId = '${nodeId}'`, `SELECT f, i FROM power WHERE nodeId = '${nodeId}' ORDER BY time DESC LIMIT 3`,
      `SELECT s FROM power WHERE nodeId = '${nodeId}' LIMIT 2`]) out.raw.push(await influx(q));
    out.aggregates.push(await queryOk(s.app, s.token, (['sum', 'min', 'max', 'mean'] as const).flatMap((fn) => [
      { select: [{ field: 'f', function: fn }, { field: 'i', function: fn }], from: FROM_V1, where: where(START, T0) },
      { select: [{ field: 'f', function: fn }], from: FROM_V1, where: where(START + 1000, START + DAY + 5000) },
    ])));
    for (const q of [
      `SELECT mean(f), max(f), min(i), sum(i), count(s) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms GROUP BY time(1d)`,
      `SELECT mean(f), count(b) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms GROUP BY time(5h)`,
      `SELECT spread(i), stddev(f), median(f) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms GROUP BY time(12h)`,
      `SELECT max(f), min(i), spread(f), count(f), sum(i), mean(f) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START + 7}ms AND time < ${T0 - 5}ms GROUP BY time(90m)`,
      `SELECT max(i), min(f), spread(i) FROM power WHERE nodeId = '${nodeId}' AND time >= ${START}ms AND time < ${T0}ms GROUP BY time(7h, 2h) fill(none)`,
    ]) out.aggregates.push(await influx(q));
  }
  return out;
}

/** Equal, but for floats of aggregates, which may differ in their last bits (another order of summation). */
function assertSameAnswers(actual: Answers, expected: Answers, message?: string): void {
  assert.deepEqual(actual.raw, expected.raw, message);
  const near = (a: unknown, b: unknown, at: string): void => {
    if (typeof a === 'number' && typeof b === 'number' && (!Number.isInteger(a) || !Number.isInteger(b))) {
      assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)), `${message ?? ''} ${at}: ${a} != ${b}`);
    } else if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
      assert.deepEqual(Object.keys(a), Object.keys(b), `${message ?? ''} ${at}`);
      for (const k of Object.keys(b)) near((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`);
    } else assert.deepEqual(a, b, `${message ?? ''} ${at}`);
  };
  near(actual.aggregates, expected.aggregates, 'aggregates');
}

/** The answers of `lines` written in order to an app of their own, never sealed: what every other way must answer. */
async function answersInOrder(t: { after(fn: () => Promise<void>): void }, lines: readonly string[]): Promise<Answers> {
  const reference = await appWith(t);
  await writeOk(reference.app, reference.token, lines.join('\n'));
  return answers(reference);
}

/**
 * Every line once and the lines `repeats` names once more (the same values: a repeat changes nothing), in an order
 * shuffled by `seed`, as the bodies of `parts` writes.
 */
function shuffledBodies(lines: readonly string[], repeats: readonly number[], seed: number, parts: number): string[] {
  const order = [...lines.map((_, i) => i), ...repeats];
  let x = seed;
  for (let i = order.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const size = Math.ceil(order.length / parts);
  return Array.from({ length: parts }, (_, p) => order.slice(p * size, (p + 1) * size).map((i) => lines[i]).join('\n'));
}

/** Lines of `points` timestamps per node, 37 minutes apart from START, with every field type and some missing. */
function dataset(points: number, nodes = ['n1', 'n2']): string[] {
  const lines: string[] = [];
  for (let k = 0; k < points; k++) {
    const t = START + k * 37 * 60_000 + (k % 3);
    for (const [n, nodeId] of nodes.entries()) {
      const fields = [`f=${(k * 1.5 + n / 10).toFixed(1)}`, `i=${k * 1000 + n}i`];
      if (k % 4 !== 1) fields.push(`s="v${k % 5}"`);
      if (k % 6 === 0) fields.push(`b=${k % 12 === 0}`);
      lines.push(`power,nodeId=${nodeId} ${fields.join(',')} ${ns(t)}`);
    }
  }
  return lines;
}

/** Until nothing is staged: the fold worker (SQLite), the node's folder or a read (PostgreSQL) folded or sealed it. */
async function nothingStaged(s: Stored): Promise<void> {
  const end = Date.now() + 20_000;
  while (await countRows(s.app, 'telemetry_staged') > 0) {
    assert.ok(Date.now() < end, 'what is staged is folded');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** dataset(60), with two integers beyond 2^53 when `big` (kept beside the staged cells: their series take the way through rows). */
function stagedDataset(big: boolean): string[] {
  const lines = dataset(60);
  if (big) lines.push(`power,nodeId=n2 i=9007199254740993i ${ns(START + 5 * 37 * 60_000 + 5)}`, `power,nodeId=n2 i=-9007199254740995i ${ns(START + DAY + 17)}`);
  return lines;
}

/** The lines again with other values of f: written later, they must win. */
function rewritten(lines: readonly string[]): string[] {
  return lines.map((l) => l.replace(/f=([0-9.]+)/, (_, f) => `f=${Number(f) + 1000}`));
}

/** `expected` answered from the rows (the later ones winning), then again once every window is sealed (2 days, 2 nodes). */
async function sameBeforeAndAfterSealing(s: Stored, expected: Answers): Promise<void> {
  // a minute on between the rounds of queries: each round spends most of a minute's budget of the tier
  s.app.clock.advance(60_000);
  assertSameAnswers(await answers(s), expected, 'rows, the later ones winning');
  await seal(s);
  assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
  s.app.clock.advance(60_000);
  assertSameAnswers(await answers(s), expected, 'sealed');
}

describe('sealing: windows move into blocks and answer as before', () => {
  it('every query form answers the same after sealing; the shard tables are gone, one block per series and day', async (t) => {
    const s = await appWith(t);
    await writeOk(s.app, s.token, dataset(110).join('\n'));
    const before = await answers(s);
    assert.deepEqual(await counts(s), { blocks: 0, heads: 3, sealed: 0 });
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 6, heads: 0, sealed: 3 });
    assertSameAnswers(await answers(s), before);
  });

  it('a window is sealed only once it has closed, with an hour of grace', async (t) => {
    const s = await appWith(t);
    await writeOk(s.app, s.token, dataset(110).join('\n'));
    await seal(s, START + 2 * DAY + DAY / 24 - 1);
    assert.deepEqual(await counts(s), { blocks: 2, heads: 2, sealed: 1 });
    await seal(s, START + 2 * DAY + DAY / 24);
    assert.deepEqual(await counts(s), { blocks: 4, heads: 1, sealed: 2 });
  });

  it('late points and re-written fields beside sealed blocks: merged by reads, then sealed into the blocks', async (t) => {
    const s = await appWith(t);
    const reference = await appWith(t);
    const lines = dataset(110);
    await writeOk(s.app, s.token, lines.join('\n'));
    await seal(s);
    // late: new points, and some fields of existing points written again (the later write wins field by field)
    const late = [
      `power,nodeId=n1 f=-7.5 ${ns(START + 37 * 60_000 * 3 + 0)}`,
      `power,nodeId=n2 i=-42i,s="late" ${ns(START + 37 * 60_000 * 50 + 2)}`,
      `power,nodeId=n1 f=0.25,b=true ${ns(START + 5)}`,
      `power,nodeId=n2 f=1e-300 ${ns(START + DAY + 123)}`,
      // at the newest end of the last window: a new newest point, and a field of the newest sealed point written again
      `power,nodeId=n1 i=77i ${ns(START + 2 * DAY + 23 * 3_600_000)}`,
      `power,nodeId=n2 f=99.5 ${ns(START + 109 * 37 * 60_000 + 1)}`,
    ];
    await writeOk(s.app, s.token, late.join('\n'));
    await writeOk(reference.app, reference.token, [...lines, ...late].join('\n'));
    const expected = await answers(reference);
    assert.equal((await counts(s)).heads, 3, 'the late points wait in shard tables made again');
    assertSameAnswers(await answers(s), expected, 'reads merge blocks and late points');
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 6, heads: 0, sealed: 3 });
    assertSameAnswers(await answers(s), expected, 'the late points sealed into the blocks');
  });

  it('SQLite decodes only the columns a read asks for, keeps them, and adds the others when a later read asks', {
    skip: testBackend() !== 'sqlite' && 'the SQLite catalogue\'s decoded blocks (PostgreSQL: pg-blocks-kept.test.ts)',
  }, async (t) => {
    const s = await appWith(t, ['n1']);
    await writeOk(s.app, s.token, dataset(110, ['n1']).join('\n'));
    await seal(s);
    const influx = async (q: string) => {
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series[0].values as unknown[][];
    };
    /** [columns decoded, columns the block holds] of each kept block of the day START */
    const kept = () => s.app.deps.db.exclusive((conn) => [...catalogueOf(conn).sealedBlocks.values()]
      .filter((b) => b?.decoded !== undefined && b.decoded.ms[0] < START + DAY)
      .map((b) => [b!.decoded!.columns.filter((c) => c !== undefined).length, b!.stats.filter((x) => x !== undefined).length]));
    const maxima = await influx(`SELECT max(f) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + DAY}ms GROUP BY time(6h)`);
    assert.deepEqual(maxima.map((v) => v[1]), [13.5, 28.5, 43.5, 57]);
    assert.deepEqual(await kept(), [[1, 4]], 'the hourly maxima decoded the float column alone');
    const weightBefore = await s.app.deps.db.exclusive((conn) => catalogueOf(conn).sealedBlocks.weightHeld);
    const raw = await influx(`SELECT * FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + DAY}ms`);
    assert.equal(raw.length, 39);
    assert.deepEqual(raw[1], [START + 37 * 60_000 + 1, null, 1.5, 1000, 'n1', null]);
    assert.deepEqual(await kept(), [[4, 4]], 'the raw read added the other three');
    // the entry was replaced, not changed: the cache took off the weight it had added for it (one block: 39 rows,
    // times at 1.5 values a row, a column more per value)
    const weightAfter = await s.app.deps.db.exclusive((conn) => catalogueOf(conn).sealedBlocks.weightHeld);
    assert.equal(weightAfter - weightBefore, 39 * 3);
  });

  it('written shuffled, with repeated points and seals in between: the same answers as written in order, never sealed', async (t) => {
    const lines = dataset(60);
    const expected = await answersInOrder(t, lines);
    await fc.assert(fc.asyncProperty(
      fc.array(fc.nat(lines.length - 1), { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), fc.nat(),
      async (repeats, parts, seed) => {
        const s = await appWith(t);
        const bodies = shuffledBodies(lines, repeats, seed, parts);
        for (const [p, body] of bodies.entries()) {
          await writeOk(s.app, s.token, body);
          if (p % 2 === 0) await seal(s);
        }
        assertSameAnswers(await answers(s), expected);
        await s.app.close();
      },
    ), { seed: 38, numRuns: 6 });
  });
});

describe('sealing straight from staged points (SQLite in a file, with its fold worker)', {
  skip: testBackend() !== 'sqlite' && 'staging is the SQLite engine\'s',
}, () => {
  /** An app on a file whose fold worker seals staged points of windows due at T0 (as a service sealing on a timer). */
  async function fileApp(t: { after(fn: () => Promise<void>): void }): Promise<Stored> {
    const dir = mkdtempSync(join(tmpdir(), 'gk-seal-staged-'));
    const app = await makeTestApp({ file: { path: join(dir, 'gridkeeper.db'), addon: addonFile(join(dir, '.native')) } });
    t.after(async () => {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    });
    assert.equal((await app.deps.db.exclusive((c) => stagingOf(c)))?.active, true, 'a fold worker started');
    await app.deps.db.exclusive((c) => sealStagedWhenDue(c, () => T0));
    const u = await writer(app, 'n1', 'n2');
    return { app, token: u.token };
  }

  /** Until nothing is staged and the worker has dropped the windows it emptied (no sealing pass is run here). */
  async function sealedByTheWorker(s: Stored): Promise<void> {
    const end = Date.now() + 20_000;
    while ((await countRows(s.app, 'telemetry_staged')) > 0 || (await counts(s)).heads > 0) {
      if (Date.now() > end) assert.fail(`not sealed by the worker: ${JSON.stringify(await counts(s))}, staged ${await countRows(s.app, 'telemetry_staged')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** 2,000 points of node n1 in the window starting at `day`, sealed straight into its block by the worker. */
  async function sealedDay(s: Stored, day: number): Promise<void> {
    await writeOk(s.app, s.token, Array.from({ length: 2000 }, (_, k) => `power,nodeId=n1 f=${k}.5 ${ns(day + k * 30_000)}`).join('\n'));
    await sealedByTheWorker(s);
  }

  it('written shuffled, with repeats and integers beyond 2^53, into closed windows: straight into blocks, the same answers as written in order', async (t) => {
    for (const big of [false, true]) {
      const lines = stagedDataset(big);
      const expected = await answersInOrder(t, lines);
      await fc.assert(fc.asyncProperty(
        fc.array(fc.nat(lines.length - 1), { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), fc.nat(),
        async (repeats, parts, seed) => {
          const s = await fileApp(t);
          for (const body of shuffledBodies(lines, repeats, seed, parts)) await writeOk(s.app, s.token, body);
          await sealedByTheWorker(s);
          // both windows' points are in blocks (a block per node and window), and no shard table is left although
          // no sealing pass ran: the worker sealed them straight from staging
          assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
          assertSameAnswers(await answers(s), expected, big ? 'with integers beyond 2^53' : undefined);
        },
      ), { seed: 38, numRuns: 3 });
    }
  });

  it('a few late points for a window whose blocks hold many go the usual way instead of rewriting the blocks', async (t) => {
    const s = await fileApp(t);
    const day = START + DAY;
    await sealedDay(s, day);
    const rowsInBlocks = async () => Number((await s.app.deps.db.get(sql<{ n: number }>`SELECT sum(rows) AS n FROM telemetry_blocks`))!.n);
    assert.equal(await rowsInBlocks(), 2000);
    // 100 points into the same window: rewriting its 2,000 for them would cost more than folding them
    await writeOk(s.app, s.token, Array.from({ length: 100 }, (_, k) => `power,nodeId=n1 f=-${k} ${ns(day + k * 30_000 + 1)}`).join('\n'));
    await nothingStaged(s);
    assert.equal(await rowsInBlocks(), 2000, 'the blocks were not rewritten');
    assert.equal(await countPoints(s.app), 100, 'the late points wait in the shard table');
    const count = async () => {
      const q = `SELECT count(f) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${T0}ms`;
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series[0].values[0][1];
    };
    assert.equal(await count(), 2100);
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 1, heads: 0, sealed: 1 });
    assert.equal(await rowsInBlocks(), 2100);
    assert.equal(await count(), 2100);
  });

  /** Points in blocks by window start, in start order. */
  async function blockRowsByWindow(s: Stored): Promise<Array<[number, number]>> {
    const rows = await s.app.deps.db.all(sql<{ start_ms: number; n: number }>`SELECT start_ms, sum(rows) AS n FROM telemetry_blocks GROUP BY start_ms ORDER BY start_ms`);
    return rows.map((r) => [Number(r.start_ms), Number(r.n)]);
  }

  it('late points of a window the writes have moved past go straight into its blocks, however few', async (t) => {
    const s = await fileApp(t);
    const day = START + DAY;
    await sealedDay(s, day);
    // one request: the window's last 100 points (a batch that crossed midnight), then the next day's first
    await writeOk(s.app, s.token, [
      ...Array.from({ length: 100 }, (_, k) => `power,nodeId=n1 f=-${k} ${ns(day + k * 30_000 + 1)}`),
      ...Array.from({ length: 100 }, (_, k) => `power,nodeId=n1 f=${k} ${ns(day + DAY + k * 30_000)}`),
    ].join('\n'));
    await sealedByTheWorker(s);
    assert.deepEqual(await blockRowsByWindow(s), [[day, 2100], [day + DAY, 100]]);
  });

  it('a trickle folded into the window the writes are in leaves the staged points of other due windows to go straight', async (t) => {
    const s = await fileApp(t);
    const day = START + DAY;
    await sealedDay(s, day);
    // one request: 100 late points into that window (too few to rewrite its blocks for), then 50 of the day before
    const late = Array.from({ length: 100 }, (_, k) => `power,nodeId=n1 f=-${k} ${ns(day + k * 30_000 + 1)}`);
    const before = Array.from({ length: 50 }, (_, k) => `power,nodeId=n2 f=${k} ${ns(START + k * 60_000)}`);
    await writeOk(s.app, s.token, [...late, ...before].join('\n'));
    // the day before went straight into its block (the trickle alone was folded), and the worker then sealed the
    // folded trickle into the blocks of its window
    await sealedByTheWorker(s);
    assert.deepEqual(await blockRowsByWindow(s), [[START, 50], [day, 2100]]);
    const q = `SELECT count(f) FROM power WHERE time >= ${START}ms AND time < ${T0}ms GROUP BY nodeId`;
    const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.results[0].series.map((x: { tags: { nodeId: string }; values: unknown[][] }) => [x.tags.nodeId, x.values[0][1]]), [['n1', 2100], ['n2', 50]]);
  });

  it('a window whose shard table already holds rows keeps the usual way: its later points are not overruled by them', async (t) => {
    const s = await fileApp(t);
    const lines = dataset(40);
    // the same points again with other values: the later write must win
    const again = rewritten(lines.slice(0, 30));
    const lock = (await s.app.deps.db.exclusive((c) => c)).file!.writeLock;
    lock.hold(); // the worker may prepare, not store
    try {
      await writeOk(s.app, s.token, lines.join('\n'));
      // a read folds what is staged into the shard tables (on the main thread, which holds the lock)
      await answers(s);
      assert.ok(await countPoints(s.app) > 0, 'the points are rows of their shard tables');
    } finally {
      lock.release();
    }
    await writeOk(s.app, s.token, again.join('\n'));
    const expected = await answersInOrder(t, [...lines, ...again]);
    await nothingStaged(s);
    assert.equal((await counts(s)).blocks, 0, 'nothing went straight into blocks');
    await sameBeforeAndAfterSealing(s, expected);
  });
});

describe('sealing straight from staged points (PostgreSQL)', { skip: testBackend() !== 'postgres' && 'PostgreSQL\'s staging' }, () => {
  /** An app whose folds take staged points of windows due at `at()` straight into blocks (as a service sealing on a timer). */
  async function dueApp(t: { after(fn: () => Promise<void>): void }, at: () => number = () => T0): Promise<Stored> {
    const s = await appWith(t);
    sealStagedWhenDuePg(s.app.deps.db, at);
    return s;
  }

  it('written shuffled, with repeats and integers beyond 2^53, into closed windows: straight into blocks, the same answers as written in order', async (t) => {
    for (const big of [false, true]) {
      const lines = stagedDataset(big);
      const expected = await answersInOrder(t, lines);
      await fc.assert(fc.asyncProperty(
        fc.array(fc.nat(lines.length - 1), { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), fc.boolean(), fc.nat(),
        async (repeats, parts, readAtOnce, seed) => {
          const s = await dueApp(t);
          for (const body of shuffledBodies(lines, repeats, seed, parts)) await writeOk(s.app, s.token, body);
          // answered at once, a read folds what is staged itself; else the node's folder does, in the background
          const early = readAtOnce ? await answers(s) : undefined;
          await nothingStaged(s);
          // every point is in a block (one per node and window) without a sealing pass; the tables hold none
          assert.deepEqual(await counts(s), { blocks: 4, heads: 2, sealed: 2 });
          assert.equal(await countPoints(s.app), 0, 'no point went into a shard table');
          if (early !== undefined) assertSameAnswers(early, expected, 'read at once');
          assertSameAnswers(await answers(s), expected, big ? 'with integers beyond 2^53' : undefined);
          // the sealing pass drops the emptied tables, and the answers stay
          await seal(s);
          assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
          s.app.clock.advance(60_000);
          assertSameAnswers(await answers(s), expected, 'tables dropped');
          await s.app.close();
        },
      ), { seed: 38, numRuns: 3 });
    }
  });

  it('the windows straight folds emptied are sealed once the folder has nothing left, not at the next pass on the timer', async (t) => {
    const s = await appWith(t);
    const db = s.app.deps.db;
    // as a service seals: a pass at start (nothing is there yet), the next one an hour later, after this test
    const stop = startSealing(db, () => T0, s.app.deps.log, 3_600_000);
    t.after(stop);
    const lines = dataset(40);
    await writeOk(s.app, s.token, lines.join('\n'));
    const expected = await answersInOrder(t, lines);
    await nothingStaged(s);
    const end = Date.now() + 10_000;
    while ((await counts(s)).heads > 0) {
      assert.ok(Date.now() < end, 'the emptied tables are dropped without a pass on the timer');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
    assert.deepEqual(await tableNames(s.app), [], 'no shard table is left');
    s.app.clock.advance(60_000);
    assertSameAnswers(await answers(s), expected, 'sealed by the folder');
  });

  it('the points of the window the writes are in go straight into its blocks once the writes pause, not after the whole gathering', async (t) => {
    const s = await dueApp(t);
    // one node's points in one closed day: every batch staged goes into the one window the writes are in, and the
    // folder waits for more (1 s at most) while the writes go on
    const lines = Array.from({ length: 20 }, (_, k) => `power,nodeId=n1 f=${k}.5 ${ns(START + k * 60_000)}`);
    const started = Date.now();
    await writeOk(s.app, s.token, lines.join('\n'));
    // counted as they are, without a read's fold (countRows folds first)
    const db = s.app.deps.db;
    while (Number((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM telemetry_staged`))!.n) > 0) {
      assert.ok(Date.now() - started < 10_000, 'the folder folds what is staged');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const took = Date.now() - started;
    assert.deepEqual(await counts(s), { blocks: 1, heads: 1, sealed: 1 });
    assert.equal(await countPoints(s.app), 0, 'no point went into a shard table');
    // no batch staged for 250 ms: the writes have paused, and what gathers is folded
    assert.ok(took < 850, `folded ${took} ms after the write: the folder waited out its whole second`);
  });

  it('late points for sealed windows go straight into their blocks and win over what they hold', async (t) => {
    const s = await dueApp(t);
    const lines = dataset(40);
    await writeOk(s.app, s.token, lines.join('\n'));
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
    // the same points again with other values, and some new ones: a table is made for them, they skip it
    const again = rewritten(lines.slice(0, 30));
    const extra = [`power,nodeId=n1 f=0.25 ${ns(START + 3)}`, `power,nodeId=n2 s="late" ${ns(START + DAY + 11)}`];
    await writeOk(s.app, s.token, [...again, ...extra].join('\n'));
    const expected = await answersInOrder(t, [...lines, ...again, ...extra]);
    await nothingStaged(s);
    assert.equal(await countPoints(s.app), 0, 'no point went into a shard table');
    s.app.clock.advance(60_000);
    assertSameAnswers(await answers(s), expected, 'the later writes win');
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
  });

  it('one request of more points than a fold takes at once: sealed in pieces in one transaction, every point kept', async (t) => {
    const s = await dueApp(t);
    const n = 120_000;
    // one series in one closed day, 0.7 s apart, written newest first: 24 staged rows of one batch
    await writeOk(s.app, s.token, Array.from({ length: n }, (_, k) => `power,nodeId=n1 f=${n - k}.5,i=${k}i ${ns(START + (n - 1 - k) * 700)}`).join('\n'));
    const stats = async () => {
      const q = `SELECT count(f), first(f), last(f), sum(i), min(i) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${T0}ms`;
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series[0].values[0].slice(1);
    };
    assert.deepEqual(await stats(), [n, 1.5, n + 0.5, (n * (n - 1)) / 2, 0]);
    await nothingStaged(s);
    assert.deepEqual(await counts(s), { blocks: 1, heads: 1, sealed: 1 });
    assert.equal(Number((await s.app.deps.db.get(sql<{ n: number }>`SELECT sum(rows) AS n FROM telemetry_blocks`))!.n), n);
    assert.equal(await countPoints(s.app), 0, 'no point went into a shard table');
  });

  it('a window whose shard table already holds rows keeps the usual way: its later points are not overruled by them', async (t) => {
    // folded before the windows were due (the clock a day earlier): the points are rows of their tables
    let now = START;
    const s = await dueApp(t, () => now);
    const lines = dataset(40);
    await writeOk(s.app, s.token, lines.join('\n'));
    await nothingStaged(s);
    assert.ok(await countPoints(s.app) > 0, 'the points are rows of their shard tables');
    now = T0;
    const again = rewritten(lines.slice(0, 30));
    await writeOk(s.app, s.token, again.join('\n'));
    const expected = await answersInOrder(t, [...lines, ...again]);
    await nothingStaged(s);
    assert.deepEqual(await counts(s), { blocks: 0, heads: 2, sealed: 0 }, 'nothing went straight into blocks');
    await sameBeforeAndAfterSealing(s, expected);
  });

  it('another node\'s rows in the table turn the window back to the usual way, and nothing is lost', async (t) => {
    const s = await dueApp(t);
    // a node of the previous version (no clock: it folds into the tables), then this one
    const other = await s.app.anotherNode();
    t.after(() => other.close());
    const o = await writer(other, 'n1', 'n2');
    const lines = dataset(40);
    await writeOk(other, o.token, lines.slice(0, 40).join('\n'));
    await settleStagedPg(other.deps.db);
    assert.equal(await countPoints(s.app), 40);
    await writeOk(s.app, s.token, lines.slice(40).join('\n'));
    const expected = await answersInOrder(t, lines);
    await nothingStaged(s);
    assertSameAnswers(await answers(s), expected);
    await seal(s);
    assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
    s.app.clock.advance(60_000);
    assertSameAnswers(await answers(s), expected, 'sealed');
  });
});

describe('all-time reads: a query without a lower time bound covers every stored point, sealed or not', () => {
  it('InfluxQL last(), SELECT * … LIMIT and a JSON query reach a point a year old, before and after sealing', async (t) => {
    const s = await appWith(t);
    const old = T0 - 400 * DAY;
    await writeOk(s.app, s.token, [
      `power,nodeId=n1 f=1.5,i=1i ${ns(old)}`, `power,nodeId=n1 f=2.5 ${ns(old + 60_000)}`,
      `power,nodeId=n1 f=3.5,i=3i ${ns(T0 - DAY)}`, `power,nodeId=n1 f=4.5 ${ns(T0 - 1000)}`,
    ].join('\n'));
    const influx = async (q: string) => {
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series?.[0]?.values;
    };
    for (const phase of ['before sealing', 'after sealing']) {
      assert.deepEqual(await influx(`SELECT * FROM power WHERE nodeId = 'n1' LIMIT 2`), [[old, 1.5, 1, 'n1'], [old + 60_000, 2.5, null, 'n1']], phase);
      assert.deepEqual(await influx(`SELECT last(f) FROM power WHERE nodeId = 'n1'`), [[T0 - 1000, 4.5]], phase);
      assert.deepEqual(await influx(`SELECT first(i), count(f) FROM power WHERE nodeId = 'n1'`), [[0, 1, 4]], phase);
      const body = await queryOk(s.app, s.token, { select: ['f'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, limit: 1 });
      assert.deepEqual(body.series[0].values, [[new Date(old).toISOString(), 1.5]], phase);
      await seal(s, T0 + DAY);
    }
    assert.deepEqual(await counts(s), { blocks: 2, heads: 0, sealed: 2 });
  });

  it('min(), max() and spread() per window answer the same before and after sealing where integers pass 2^53', async (t) => {
    const s = await appWith(t);
    const lines: string[] = [];
    for (let k = 0; k < 48; k++) {
      // one half of the windows within 2^53, the other beyond it (whose windows are answered from the points)
      const i = k < 24 ? BigInt(1000 + k) : 9007199254740993n + BigInt(k * 2);
      lines.push(`power,nodeId=n1 i=${i}i,f=${k}.5 ${ns(START + k * 3_600_000)}`);
    }
    await writeOk(s.app, s.token, lines.join('\n'));
    const q = `SELECT max(i), min(i), spread(i), max(f) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + 2 * DAY}ms GROUP BY time(6h)`;
    const text = async () => {
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      return res.text;
    };
    const before = await text();
    assert.match(before, new RegExp(`\\[${START},1005,1000,5,5\\.5\\],\\[${START + 6 * 3_600_000},1011,1006,5,11\\.5\\]`));
    await seal(s, T0 + DAY);
    assert.equal((await counts(s)).heads, 0);
    assert.equal(await text(), before);
  });

  it('an integer sum over several sealed windows that passes 2^53 is exact', async (t) => {
    const s = await appWith(t);
    await writeOk(s.app, s.token, [`power,nodeId=n1 i=9007199254740991i ${ns(START)}`, `power,nodeId=n1 i=2i ${ns(START + DAY)}`,
      `power,nodeId=n1 i=3i ${ns(START + 2 * DAY)}`].join('\n'));
    await seal(s, T0 + DAY);
    assert.deepEqual(await counts(s), { blocks: 3, heads: 0, sealed: 3 });
    for (const q of [`SELECT sum(i) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + 3 * DAY}ms GROUP BY time(1000d)`,
      `SELECT sum(i) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + 3 * DAY}ms`]) {
      const res = await s.app.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { token: s.token });
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /,9007199254740996\]\]/, `${q}: ${res.text}`);
    }
  });
});

describe('sealing beside reads on PostgreSQL', { skip: testBackend() !== 'postgres' && 'PostgreSQL only: SQLite snapshots hold their schema' }, () => {
  it('a read snapshot begun before another node seals answers from the rows it sees; the emptied tables go once it has ended', async (t) => {
    const s = await appWith(t);
    await writeOk(s.app, s.token, dataset(40).join('\n'));
    const expected = await answers(s);
    const other = await s.app.anotherNode();
    t.after(() => other.close());
    const db = s.app.deps.db;
    const body: Query = { select: ['f', 'i'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: START }, { operator: '<', value: T0 }] } };
    let snapshots = 0;
    const rows = await settledRead(db, async (tx) => {
      // the snapshot's catalogue names the shard tables; the other node seals them before they are read
      if (snapshots++ === 0) await sealDue(other.deps.db, T0);
      return readAttempts(db).run(tx, (reads) => planQueries(reads, body, T0).queries.map((q) => {
        const series = q.stored === undefined ? undefined : reads.seriesOfNode(q.stored, 'power', 'n1')[0];
        return series === undefined ? '' : reads.rawRows(q, series.id, resolveColumns(q.stored!.measurements.get('power')!, body.select));
      }));
    });
    assert.equal(snapshots, 1, 'the snapshot read what it saw: no table was dropped under it');
    const all = (expected.raw[0] as Array<{ series: Array<{ values: unknown[][] }> }>)[0].series[0].values;
    assert.deepEqual(JSON.parse(`[${rows[0]}]`), all.map((r) => r.slice(0, 3)).filter((r) => r[1] !== null || r[2] !== null));
    // every point moved into the blocks; the emptied tables stayed for the snapshot, and go with the next pass
    assert.deepEqual(await counts(s), { blocks: 4, heads: 2, sealed: 2 });
    assert.equal((await tableNames(s.app)).length, 2);
    await sealDue(other.deps.db, T0);
    assert.deepEqual(await counts(s), { blocks: 4, heads: 0, sealed: 2 });
    assert.deepEqual(await tableNames(s.app), []);
    assertSameAnswers(await answers(s), expected);
  });

  it('a shard table dropped under a snapshot anyway (by a process that does not wait) is read again, in a new snapshot', async (t) => {
    const s = await appWith(t);
    await writeOk(s.app, s.token, dataset(40).join('\n'));
    const db = s.app.deps.db;
    const body: Query = { select: ['f', 'i'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: START }, { operator: '<', value: T0 }] } };
    const other = await s.app.anotherNode();
    t.after(() => other.close());
    let snapshots = 0;
    const rows = await settledRead(db, async (tx) => {
      if (snapshots++ === 0) {
        // what an earlier version's sealing did: move the points and drop the tables without waiting for reads
        await other.deps.db.tx(async (w) => {
          const tables = await w.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards`);
          for (const r of tables) await w.run(sql`DROP TABLE ${sql.id(r.table_name)}`);
          await w.run(sql`DELETE FROM telemetry_shards`);
        });
      }
      return readAttempts(db).run(tx, (reads) => planQueries(reads, body, T0).queries.map((q) => {
        const series = q.stored === undefined ? undefined : reads.seriesOfNode(q.stored, 'power', 'n1')[0];
        return series === undefined ? '' : reads.rawRows(q, series.id, resolveColumns(q.stored!.measurements.get('power')!, body.select));
      }));
    });
    assert.equal(snapshots, 2, 'the first snapshot failed on a dropped table, the second read again');
    assert.deepEqual(rows, [''], 'the second snapshot answers what is stored now: nothing');
  });
});
