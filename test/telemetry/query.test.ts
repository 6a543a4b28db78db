// POST /v1/telemetry/query: the Influx-style result shape, time conditions, tags, orderBy, limit, functions, batches,
// per-statement errors and authorization by where.tags.nodeId.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { FROM_V1, deviceOf, iso, ns, query, queryOk, userWithNodes, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const H = 3_600_000;

/** Points of n1 every 10 minutes over three days ending at T0 (three 1-day shards), p = i * 0.5 and e = i (integer). */
async function threeDays(t: TestApp, token: string): Promise<Array<{ at: number; p: number; e: number }>> {
  const points = Array.from({ length: 3 * 144 }, (_, i) => ({ at: T0 - 3 * DAY + i * 600_000, p: i * 0.5, e: i }));
  await writeOk(t, token, points.map((x) => `power,nodeId=n1 p=${x.p},e=${x.e}i ${ns(x.at)}`).join('\n'));
  return points;
}

const since = (ms: number) => ({ operator: '>=', value: ms });
const before = (ms: number) => ({ operator: '<', value: ms });

describe('telemetry query: happy', () => {
  it('answers a single query with one object in the Influx shape', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1,phase=L1 p=1.5,s="x" ${ns(T0 - 2000)}\npower,nodeId=n1,phase=L1 p=2.5 ${ns(T0 - 1000)}`);
    const body = await queryOk(app, u.token, { select: ['p', 's'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body, {
      statement_id: 0,
      series: [{ name: 'power', tags: { nodeId: 'n1', phase: 'L1' }, columns: ['time', 'p', 's'], values: [[iso(T0 - 2000), 1.5, 'x'], [iso(T0 - 1000), 2.5, null]] }],
    });
  });

  it('answers an array with an array in request order, also for one query', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    const one = await queryOk(app, u.token, [q]);
    assert.ok(Array.isArray(one));
    assert.equal(one.length, 1);
    const three = await queryOk(app, u.token, [q, { ...q, where: { tags: { nodeId: 'nope' } } }, { ...q, select: ['zz'] }]);
    assert.deepEqual(three.map((r: { statement_id: number }) => r.statement_id), [0, 1, 2]);
    assert.deepEqual(three[1], { statement_id: 1, error: 'Unauthorized' });
    assert.deepEqual(three[2], { statement_id: 2, error: 'field "zz" does not exist in measurement "power"' });
  });

  it('a small limit (read row by row) answers the first points of the unlimited answer, across shards, in both orders', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // a few points at the edges of three shards, of mixed types, some without the selected float
    const at = [T0 - 3 * DAY + 1, T0 - 2 * DAY - 7, T0 - 2 * DAY - 3, T0 - 2 * DAY, T0 - DAY - 1, T0 - DAY + 5, T0 - 10];
    await writeOk(app, u.token, at.map((ms, i) => i % 3 === 1
      ? `power,nodeId=n1 e=${i}i,b=${i % 2 === 0} ${ns(ms)}`
      : `power,nodeId=n1 p=${i * 1.5 + 0.1},e=${-i}i,s="v ${i}" ${ns(ms)}`).join('\n'));
    for (const select of [['p'], ['p', 'e', 'b', 's']]) {
      for (const orderBy of ['ASC', 'DESC'] as const) {
        for (const time of [[since(T0 - 3 * DAY)], [since(T0 - 2 * DAY - 5), before(T0 - DAY + 5)]]) {
          const q = { select, from: FROM_V1, where: { tags: { nodeId: 'n1' }, time }, orderBy };
          const all = (await queryOk(app, u.token, q)).series[0].values;
          assert.ok(all.length >= 2);
          for (let limit = 1; limit <= all.length + 1; limit++) {
            const some = await queryOk(app, u.token, { ...q, limit });
            assert.deepEqual(some.series[0].values, all.slice(0, limit), `${select} ${orderBy} ${JSON.stringify(time)} limit ${limit}`);
          }
        }
      }
    }
  });

  it('round-trips points across shard boundaries, in both orders', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const points = await threeDays(app, u.token);
    assert.deepEqual((await app.deps.db.all(sql<{ w: number }>`SELECT shard_window AS w FROM telemetry_shards ORDER BY shard_window`)).map((r) => r.w),
      [T0 / DAY - 3, T0 / DAY - 2, T0 / DAY - 1]);
    const q = { select: ['p', 'e'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(T0 - 3 * DAY)] } };
    const asc = await queryOk(app, u.token, q);
    assert.deepEqual(asc.series[0].values, points.map((x) => [iso(x.at), x.p, x.e]));
    const desc = await queryOk(app, u.token, { ...q, orderBy: 'DESC' });
    assert.deepEqual(desc.series[0].values, points.map((x) => [iso(x.at), x.p, x.e]).reverse());
  });

  it('limit counts points per series, across shards, from the chosen end', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const points = await threeDays(app, u.token);
    await writeOk(app, u.token, `power,nodeId=n1,phase=L2 p=100 ${ns(T0 - 10)}`);
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(T0 - 3 * DAY)] } };
    // the newest 200 points of the 3-day series span two shards
    const desc = await queryOk(app, u.token, { ...q, orderBy: 'DESC', limit: 200 });
    assert.deepEqual(desc.series.map((s: { tags: object }) => s.tags), [{ nodeId: 'n1' }, { nodeId: 'n1', phase: 'L2' }]);
    assert.deepEqual(desc.series[0].values, points.slice(-200).reverse().map((x) => [iso(x.at), x.p]));
    assert.deepEqual(desc.series[1].values, [[iso(T0 - 10), 100]]);
    const asc = await queryOk(app, u.token, { ...q, limit: 150 });
    assert.deepEqual(asc.series[0].values, points.slice(0, 150).map((x) => [iso(x.at), x.p]));
  });

  it('pages through long answers without losing or repeating a point, nanoseconds included', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // 25,000 points in one shard; each millisecond holds two points (0 and 500 ns past it)
    const points = Array.from({ length: 25_000 }, (_, i) => ({ ms: T0 - DAY + 1 + Math.floor(i / 2) * 3, ns: (i % 2) * 500, v: i }));
    const lines = points.map((x) => `power,nodeId=n1 v=${x.v}i ${BigInt(x.ms) * 1_000_000n + BigInt(x.ns)}`);
    for (let i = 0; i < lines.length; i += 5000) await writeOk(app, u.token, lines.slice(i, i + 5000).join('\n'));
    const q = { select: ['v'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(T0 - DAY)] } };
    const values = async (extra: object) => (await queryOk(app, u.token, { ...q, ...extra })).series[0].values.map((r: unknown[]) => r[1]);
    const all = points.map((x) => x.v);
    assert.deepEqual(await values({}), all);
    assert.deepEqual(await values({ orderBy: 'DESC' }), [...all].reverse());
    assert.deepEqual(await values({ limit: 12_345 }), all.slice(0, 12_345));
    assert.deepEqual(await values({ orderBy: 'DESC', limit: 10_001 }), [...all].reverse().slice(0, 10_001));
    const first = (await queryOk(app, u.token, { ...q, limit: 2 })).series[0].values;
    assert.deepEqual(first.map((r: unknown[]) => r[0]), [iso(T0 - DAY + 1), '2025-12-31T00:00:00.001000500Z']);
  });

  it('applies every time operator in unix ms or ISO, and two conditions intersect', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const points = await threeDays(app, u.token);
    const select = async (time: object[]) => {
      const body = await queryOk(app, u.token, { select: ['e'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time } });
      return (body.series?.[0].values ?? []).map((r: unknown[]) => r[1]);
    };
    const at = points[100].at;
    const es = (pred: (x: { at: number }) => boolean) => points.filter((x) => x.at >= T0 - 30 * DAY && x.at < T0 && pred(x)).map((x) => x.e);
    assert.deepEqual(await select([{ operator: '=', value: at }]), [100]);
    assert.deepEqual(await select([{ operator: '=', value: iso(at) }]), [100]);
    assert.deepEqual(await select([{ operator: '>', value: at }, { operator: '<=', value: points[103].at }]), [101, 102, 103]);
    assert.deepEqual(await select([{ operator: '>=', value: iso(at) }, { operator: '<', value: points[103].at }]), [100, 101, 102]);
    assert.deepEqual(await select([{ operator: '>=', value: '2025-12-31' }]), es((x) => x.at >= T0 - DAY));
    assert.deepEqual(await select([{ operator: '<', value: '2025-12-29T01:00:00+01:00' }]), es((x) => x.at < T0 - 3 * DAY));
    assert.deepEqual(await select([{ operator: '<', value: '2025-12-29T00:00:00.001Z' }]), [0]);
  });

  it('without a lower time bound reads every stored point up to now; the charge still assumes the worst-case range', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [
      `power,nodeId=n1 p=1 ${ns(T0 - 400 * DAY)}`, `power,nodeId=n1 p=2 ${ns(T0 - 29 * DAY)}`,
      `power,nodeId=n1 p=3 ${ns(T0 - 1)}`, `power,nodeId=n1 p=4 ${ns(T0 + 1000)}`,
    ].join('\n'));
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    const body = await queryOk(app, u.token, q);
    assert.deepEqual(body.series[0].values.map((r: unknown[]) => r[1]), [1, 2, 3]);
    const dry = await queryOk(app, u.token, q, '?dryRun=true');
    assert.deepEqual([dry.estimatedDatapoints, dry.scannedShards], [30 * 8640, 30], 'the estimate of a 30-day range, whatever is stored');
    // a row of functions without a lower bound is timed at 1970-01-01, as InfluxDB answers
    const sum = await queryOk(app, u.token, { ...q, select: [{ field: 'p', function: 'sum' }], where: { tags: { nodeId: 'n1' }, time: [{ operator: '<', value: T0 }] } });
    assert.deepEqual(sum.series[0].values, [['1970-01-01T00:00:00.000Z', 6]]);
  });

  it('matches every series whose tags include all where.tags', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1', 'n2');
    await writeOk(app, u.token, [
      `power,nodeId=n1,phase=L1,site=a p=1 ${ns(T0 - 3000)}`,
      `power,nodeId=n1,phase=L2,site=a p=2 ${ns(T0 - 2000)}`,
      `power,nodeId=n1,phase=L1,site=b p=3 ${ns(T0 - 1000)}`,
      `power,nodeId=n2,phase=L1,site=a p=4 ${ns(T0 - 1000)}`,
      `other,nodeId=n1,phase=L1,site=a p=5 ${ns(T0 - 1000)}`,
    ].join('\n'));
    const run = (tags: Record<string, string>) => queryOk(app, u.token, { select: ['p'], from: FROM_V1, where: { tags } });
    const l1 = await run({ nodeId: 'n1', phase: 'L1' });
    assert.deepEqual(l1.series.map((s: { tags: object; values: unknown[][] }) => [s.tags, s.values.map((r) => r[1])]), [
      [{ nodeId: 'n1', phase: 'L1', site: 'a' }, [1]],
      [{ nodeId: 'n1', phase: 'L1', site: 'b' }, [3]],
    ]);
    assert.deepEqual(await run({ nodeId: 'n1', phase: 'L3' }), { statement_id: 0 });
    assert.deepEqual(await run({ nodeId: 'n1', nosuchtag: 'x' }), { statement_id: 0 });
    assert.equal((await run({ nodeId: 'n1' })).series.length, 3);
  });

  it('keeps each measurement\'s field types though measurements share shard tables and columns', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // field number 0 is a float in `a`, a boolean in `b`, an integer in `c`: all three live in column c0
    await writeOk(app, u.token, `a,nodeId=n1 x=0.5 ${ns(T0 - 2000)}\nb,nodeId=n1 x=true ${ns(T0 - 2000)}\nc,nodeId=n1 x=7i ${ns(T0 - 2000)}`);
    const ask = async (measurement: string, select: unknown[]) =>
      (await queryOk(app, u.token, { select, from: { ...FROM_V1, measurement }, where: { tags: { nodeId: 'n1' } } })).series[0].values[0].slice(1);
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(await ask('a', ['x']), [0.5]);
      assert.deepEqual(await ask('b', ['x']), [true]);
      assert.deepEqual(await ask('c', ['x']), [7]);
      assert.deepEqual(await ask('a', [{ field: 'x', function: 'max' }]), [0.5]);
      assert.deepEqual(await ask('c', [{ field: 'x', function: 'max' }]), [7]);
    }
  });

  it('skips times where none of the selected fields has a value', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 a=1 ${ns(T0 - 3000)}\npower,nodeId=n1 b=2 ${ns(T0 - 2000)}\npower,nodeId=n1 a=3,b=4 ${ns(T0 - 1000)}`);
    const body = await queryOk(app, u.token, { select: ['b'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series[0].values, [[iso(T0 - 2000), 2], [iso(T0 - 1000), 4]]);
  });

  it('computes sum, min, max and mean per series across shards, timed at the range start', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const points = await threeDays(app, u.token);
    const from = T0 - 2 * DAY - 5 * H;
    const to = T0 - 7 * H;
    const inRange = points.filter((x) => x.at >= from && x.at < to);
    const fns = ['sum', 'min', 'max', 'mean'] as const;
    const select = [...fns.map((f) => ({ field: 'p', function: f })), ...fns.map((f) => ({ field: 'e', function: f }))];
    const body = await queryOk(app, u.token, { select, from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(from), before(to)] } });
    const expected = (xs: number[]) => [xs.reduce((a, b) => a + b, 0), Math.min(...xs), Math.max(...xs), xs.reduce((a, b) => a + b, 0) / xs.length];
    assert.deepEqual(body.series[0].columns, ['time', 'sum_p', 'min_p', 'max_p', 'mean_p', 'sum_e', 'min_e', 'max_e', 'mean_e']);
    const row = body.series[0].values;
    assert.equal(row.length, 1);
    assert.equal(row[0][0], iso(from));
    const want = [...expected(inRange.map((x) => x.p)), ...expected(inRange.map((x) => x.e))];
    row[0].slice(1).forEach((v: number, i: number) => assert.ok(Math.abs(v - want[i]) <= 1e-9 * Math.abs(want[i]), `${body.series[0].columns[i + 1]}: ${v} vs ${want[i]}`));
    // the integer sum is exact and an integer
    assert.equal(row[0][5], inRange.reduce((a, x) => a + x.e, 0));
  });

  it('gives integer sums with every digit, and null for a field without values in the range', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 e=4611686018427387903i,p=1 ${ns(T0 - 2 * DAY)}\npower,nodeId=n1 e=4611686018427387903i ${ns(T0 - 1000)}\npower,nodeId=n1 e=1i ${ns(T0 - 500)}`);
    const res = await query(app, u.token, { select: [{ field: 'e', function: 'sum' }, { field: 'p', function: 'max' }], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.equal(res.status, 200);
    assert.match(res.text, /"values":\[\["[^"]+",9223372036854775807,1\]\]/);
    const lastDay = await query(app, u.token, { select: [{ field: 'e', function: 'sum' }, { field: 'p', function: 'max' }], from: FROM_V1,
      where: { tags: { nodeId: 'n1' }, time: [since(T0 - DAY)] } });
    assert.match(lastDay.text, new RegExp(`"values":\\[\\["${iso(T0 - DAY)}",4611686018427387904,null\\]\\]`));
  });

  it('reads the legacy from form, and namespaces of versions 2 and IOx', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${ns(T0 - 1000)}`, 'org=acme&bucket=raw_one_s');
    await writeOk(app, u.token, `power,nodeId=n1 p=3 ${ns(T0 - 1000)}`, 'namespace=plant_one_h');
    const where = { tags: { nodeId: 'n1' } };
    const answers = await queryOk(app, u.token, [
      { select: ['p'], from: { measurement: 'power', database: 'energy', retentionPolicy: 'autogen' }, where },
      { select: ['p'], from: { measurement: 'power', namespace: { version: '2', organization: 'acme', bucket: 'raw_one_s' } }, where },
      { select: ['p'], from: { measurement: 'power', namespace: { version: 'IOx', value: 'plant_one_h' } }, where },
      { select: ['p'], from: { measurement: 'power', namespace: { version: '1', database: 'energy', retentionPolicy: 'other' } }, where },
      { select: ['p'], from: { measurement: 'nothing', namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' } }, where },
    ]);
    assert.deepEqual(answers.map((a: { series?: Array<{ values: unknown[][] }> }) => a.series?.[0].values[0][1]), [1, 2, 3, undefined, undefined]);
    assert.deepEqual(answers[3], { statement_id: 3 });
  });

  it('answers a batch of 1000 queries in request order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const nodes = Array.from({ length: 10 }, (_, i) => `n${i}`);
    const u = await writer(app, ...nodes);
    await writeOk(app, u.token, nodes.flatMap((n, i) => [1, 2, 3].map((k) => `power,nodeId=${n} p=${i * 10 + k} ${ns(T0 - 4000 + k * 1000)}`)).join('\n'));
    await deviceOf(app, 'foreign');
    const queries = Array.from({ length: 1000 }, (_, i) => {
      const nodeId = i % 97 === 0 ? 'foreign' : nodes[i % 10];
      return { select: ['p'], from: FROM_V1, where: { tags: { nodeId }, time: [since(T0 - H)] }, orderBy: i % 2 ? 'DESC' : 'ASC', limit: 1 };
    });
    const answers = await queryOk(app, u.token, queries);
    assert.equal(answers.length, 1000);
    answers.forEach((a: any, i: number) => {
      assert.equal(a.statement_id, i);
      if (i % 97 === 0) { assert.deepEqual(a, { statement_id: i, error: 'Unauthorized' }); return; }
      const n = i % 10;
      assert.deepEqual(a.series[0].tags, { nodeId: nodes[n] });
      assert.deepEqual(a.series[0].values, i % 2 ? [[iso(T0 - 1000), n * 10 + 3]] : [[iso(T0 - 3000), n * 10 + 1]]);
    });
  });

  it('lets a user with read access only query', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const w = await writer(app, 'n1');
    await writeOk(app, w.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
    const reader = await userWithNodes(app, { n1: {} });
    const body = await queryOk(app, reader.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series[0].values, [[iso(T0 - 1000), 1]]);
  });
});

describe('telemetry query: statement errors', () => {
  it('reports a bad field for that query alone', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1,s="x",b=true ${ns(T0 - 1000)}`);
    const where = { tags: { nodeId: 'n1' } };
    const answers = await queryOk(app, u.token, [
      { select: ['p', 'nope'], from: FROM_V1, where },
      { select: [{ field: 's', function: 'mean' }], from: FROM_V1, where },
      { select: [{ field: 'b', function: 'sum' }], from: FROM_V1, where },
      { select: ['p', { field: 'p', function: 'max' }], from: FROM_V1, where },
      { select: ['p'], from: FROM_V1, where },
    ]);
    assert.deepEqual(answers.slice(0, 4), [
      { statement_id: 0, error: 'field "nope" does not exist in measurement "power"' },
      { statement_id: 1, error: 'mean() needs a numeric field; "s" is string' },
      { statement_id: 2, error: 'sum() needs a numeric field; "b" is boolean' },
      { statement_id: 3, error: 'mixing functions and plain fields in one select is not supported' },
    ]);
    assert.deepEqual(answers[4].series[0].values, [[iso(T0 - 1000), 1]]);
  });

  it('an empty time range matches nothing', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
    const body = await queryOk(app, u.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' }, time: [since(T0), before(T0 - 5000)] } });
    assert.deepEqual(body, { statement_id: 0 });
  });
});

describe('telemetry query: validation', () => {
  it('refuses malformed bodies and parameters with 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    const bad = async (body: unknown, params = '') => assertError(await query(app, u.token, body, params), 400, 'BAD_REQUEST');
    await bad({ ...q, select: [] });
    await bad({ ...q, select: Array(101).fill('p') });
    await bad({ ...q, extra: 1 });
    await bad({ ...q, orderBy: 'UP' });
    await bad({ ...q, limit: 0 });
    await bad({ ...q, where: { time: [since(1), since(2), since(3)] } });
    await bad({ ...q, where: { time: [{ operator: '>=', value: '2026-02-30' }] } });
    await bad({ ...q, where: { tags: { nodeId: 5 } } });
    await bad({ ...q, select: [{ field: 'p', function: 'median' }] });
    await bad([]);
    await bad(Array(1001).fill(q));
    await bad(q, '?apiTier=gold');
    await bad(q, '?dryRun=maybe');
    await bad(q, '?unknown=1');
    assert.equal((await query(app, u.token, q, '?apiTier=premium&dryRun=false')).status, 200);
  });
});

describe('telemetry query: security', () => {
  it('requires authentication', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await assertRequiresAuth(app, 'POST', '/v1/telemetry/query', { select: ['p'], from: FROM_V1 });
  });

  it('a statement without readable where.tags.nodeId is Unauthorized, whatever exists', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const w = await writer(app, 'n1', 'n2');
    await writeOk(app, w.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}\npower,nodeId=n2 p=2 ${ns(T0 - 1000)}`);
    const u = await userWithNodes(app, { n1: {} });
    const where = (tags?: Record<string, string>) => (tags ? { tags } : undefined);
    const answers = await queryOk(app, u.token, [
      { select: ['p'], from: FROM_V1, where: where({ nodeId: 'n2' }) },
      { select: ['p'], from: FROM_V1 },
      { select: ['p'], from: FROM_V1, where: where({ phase: 'L1' }) },
      { select: ['p'], from: FROM_V1, where: where({ nodeId: 'ghost' }) },
      { select: ['nope'], from: FROM_V1, where: where({ nodeId: 'n2' }) },
      { select: ['p'], from: FROM_V1, where: where({ nodeId: 'n1' }) },
    ]);
    assert.deepEqual(answers.slice(0, 5).map((a: { error?: string }) => a.error), Array(5).fill('Unauthorized'));
    assert.deepEqual(answers[5].series[0].values, [[iso(T0 - 1000), 1]]);
    // the root role's admin has no monitors relation to these devices either
    assert.deepEqual(await queryOk(app, app.adminToken, { select: ['p'], from: FROM_V1, where: where({ nodeId: 'n1' }) }), { statement_id: 0, error: 'Unauthorized' });
  });
});
