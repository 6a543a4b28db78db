// Functions against values computed in the test: random writes (overwrites included) interleaved with random ranges,
// so cached block statistics are built, made stale by writes and recomputed. Values are multiples of 0.25, so float
// sums are exact in any order and can be compared exactly.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeTestApp, T0 } from '../support/app.ts';
import { FROM_V1, iso, ns, queryOk, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const H = 3_600_000;
const FNS = ['sum', 'min', 'max', 'mean'] as const;

interface Op { kind: 'write'; points: Array<{ at: number; f?: number; i?: number }> }
interface Ask { kind: 'query'; from: number; to: number }

// Times within three 1-day shards before T0, often on block (hour) edges.
const time = fc.oneof(
  fc.integer({ min: T0 - 3 * DAY, max: T0 - 1 }),
  fc.integer({ min: -72, max: -1 }).chain((h) => fc.constantFrom(T0 + h * H, T0 + h * H - 1, T0 + h * H + 1)),
);
const point = fc.record({
  at: time,
  f: fc.option(fc.integer({ min: -400_000, max: 400_000 }).map((k) => k / 4), { nil: undefined }),
  i: fc.option(fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }), { nil: undefined }),
}).filter((p) => p.f !== undefined || p.i !== undefined);
const op: fc.Arbitrary<Op | Ask> = fc.oneof(
  fc.array(point, { minLength: 1, maxLength: 30 }).map((points) => ({ kind: 'write' as const, points })),
  fc.tuple(time, time).map(([a, b]) => ({ kind: 'query' as const, from: Math.min(a, b), to: Math.max(a, b) + 1 })),
);

describe('telemetry functions: against values computed in the test', () => {
  it('match sum, min, max and mean over random writes and ranges', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    let run = 0;
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 12 }), async (ops) => {
      const measurement = `m${run++}`;
      const from = { ...FROM_V1, measurement };
      const stored = new Map<number, { f?: number; i?: number }>();
      const known: Array<'f' | 'i'> = [];
      for (const o of ops) {
        if (o.kind === 'write') {
          await writeOk(app, await app.token(u.id), o.points.map((p) => {
            const fields = [p.f === undefined ? '' : `f=${p.f}`, p.i === undefined ? '' : `i=${p.i}i`].filter(Boolean).join(',');
            return `${measurement},nodeId=n1 ${fields} ${ns(p.at)}`;
          }).join('\n'));
          for (const p of o.points) {
            stored.set(p.at, { ...stored.get(p.at), ...(p.f === undefined ? {} : { f: p.f }), ...(p.i === undefined ? {} : { i: p.i }) });
            for (const k of ['f', 'i'] as const) if (p[k] !== undefined && !known.includes(k)) known.push(k);
          }
          continue;
        }
        if (known.length === 0) continue;
        const select = known.flatMap((field) => FNS.map((fn) => ({ field, function: fn })));
        // a minute later each time: the cost bucket refills (docs/api.md#rate-limit), with a token of that minute
        app.clock.advance(60_000);
        const body = await queryOk(app, await app.token(u.id), { select, from, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: o.from }, { operator: '<', value: o.to }] } });
        const inRange = [...stored.entries()].filter(([at]) => at >= o.from && at < o.to).map(([, v]) => v);
        const expect = (xs: number[]) => (xs.length === 0 ? [null, null, null, null]
          : [xs.reduce((a, b) => a + b, 0), Math.min(...xs), Math.max(...xs), xs.reduce((a, b) => a + b, 0) / xs.length]);
        const values = known.map((k) => inRange.flatMap((v) => (v[k] === undefined ? [] : [v[k]!])));
        if (values.every((xs) => xs.length === 0)) {
          assert.deepEqual(body, { statement_id: 0 });
          continue;
        }
        assert.deepEqual(body.series?.[0].values, [[iso(o.from), ...values.flatMap(expect)]], JSON.stringify({ o, body }));
      }
    }), { numRuns: 40 });
  });

  it('stays right when a point inside a cached block is overwritten or added', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const mean = async () => (await queryOk(app, u.token, { select: [{ field: 'p', function: 'sum' }, { field: 'p', function: 'max' }], from: FROM_V1,
      where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }, { operator: '<', value: T0 }] } })).series[0].values[0].slice(1);
    await writeOk(app, u.token, Array.from({ length: 48 }, (_, k) => `power,nodeId=n1 p=1 ${ns(T0 - DAY + k * 30 * 60_000)}`).join('\n'));
    assert.deepEqual(await mean(), [48, 1]);
    await writeOk(app, u.token, `power,nodeId=n1 p=10 ${ns(T0 - DAY + 5 * H)}`); // overwrite: the block of hour 5
    assert.deepEqual(await mean(), [57, 10]);
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${ns(T0 - DAY + 7 * H + 1)}`); // a new point in hour 7
    assert.deepEqual(await mean(), [59, 10]);
    await writeOk(app, u.token, `power,nodeId=n1 p=-3 ${ns(T0 - 1)}`); // the last hour
    assert.deepEqual(await mean(), [56, 10]);
  });
});
