// A block's times: exact round trips of (ms, sub) rows, nearly free for regular intervals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeTimes, encodeTimes } from '../../../src/telemetry/blocks/timestamps.ts';
import { MAX_SAFE, SEEDED } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, roundTrip as check } from './codec-checks.ts';

/** Rows in increasing (ms, sub) order: a start anywhere in the safe range, steps regular, jittered or huge. */
const rows = fc.tuple(
  fc.oneof(fc.integer({ min: -(2 ** 45), max: 2 ** 45 }), fc.constantFrom(-MAX_SAFE, -1, 0, 1_767_225_600_000)),
  fc.constantFrom(10_000, 1000, 1, 60_000),
  fc.array(fc.tuple(
    fc.oneof(
      { arbitrary: fc.constant(0), weight: 20 },
      { arbitrary: fc.integer({ min: -5, max: 5 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 2 ** 52 }), weight: 1 },
    ),
    fc.oneof({ arbitrary: fc.constant(0), weight: 10 }, { arbitrary: fc.integer({ min: 0, max: 999_999 }), weight: 1 }),
  ), { maxLength: 2000 }),
).map(([start, step, steps]) => {
  const ms: number[] = [];
  const sub: number[] = [];
  let t = start;
  for (const [jump, ns] of steps) {
    const next = t + Math.max(step + jump, 0);
    if (next > MAX_SAFE) break;
    // equal ms need increasing sub-ms: keep rows strictly increasing as a block's are
    if (ms.length > 0 && next === ms[ms.length - 1] && ns <= sub[sub.length - 1]) continue;
    ms.push(t = next);
    sub.push(ns);
  }
  return { ms: Float64Array.from(ms), sub: Int32Array.from(sub) };
});

function roundTrip(ms: Float64Array, sub: Int32Array): Uint8Array {
  const { back, bytes } = check((w) => encodeTimes(w, ms, sub), (r) => decodeTimes(r, ms.length));
  assert.deepEqual(back.ms, ms);
  assert.deepEqual(back.sub, sub);
  return bytes;
}

describe('timestamps', () => {
  it('give back every row exactly: negative times, huge gaps, sub-ms values', () => {
    fc.assert(fc.property(rows, ({ ms, sub }) => { roundTrip(ms, sub); }), SEEDED);
    roundTrip(Float64Array.of(-MAX_SAFE, MAX_SAFE), Int32Array.of(0, 999_999));
    roundTrip(Float64Array.of(), Int32Array.of());
    roundTrip(Float64Array.of(5), Int32Array.of(7));
  });

  it('cost almost nothing per row at regular intervals', () => {
    const n = 8640;
    const ms = Float64Array.from({ length: n }, (_, i) => 1_767_225_600_000 + i * 10_000);
    assert.ok(roundTrip(ms, new Int32Array(n)).length <= 20);
    // a gap, and one point in 500 off by a few ms
    const ragged = ms.map((t, i) => t + (i > 3000 ? 600_000 : 0) + (i % 500 === 3 ? 4 : 0));
    const bytes = roundTrip(ragged, new Int32Array(n)).length;
    assert.ok(bytes <= n * 0.05, `${bytes} bytes`);
  });

  it('keep sub-ms values in a stream of their own: one byte when all are zero', () => {
    const ms = Float64Array.from({ length: 100 }, (_, i) => i * 1000);
    const zero = roundTrip(ms, new Int32Array(100)).length;
    const some = roundTrip(ms, Int32Array.from({ length: 100 }, (_, i) => (i === 50 ? 1 : 0))).length;
    assert.ok(some > zero);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors(decodeTimes, 3000, 2000);
  });
});
