// Frame-of-reference chunks: exact round trips, the size the encoder plans is the size it writes, and outliers left
// out as patches instead of widening their chunk.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { framesSize, readFrames, writeFrames } from '../../../src/telemetry/blocks/frames.ts';
import { MAX_SAFE, SEEDED } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, roundTrip as check } from './codec-checks.ts';

/** Noise around a level, with a few outliers of either sign */
const noisy = fc.tuple(
  fc.array(fc.integer({ min: -60, max: 60 }), { maxLength: 700 }),
  fc.array(fc.tuple(fc.nat(), fc.oneof(fc.integer({ min: -100_000, max: 100_000 }), fc.constantFrom(2 ** 52, -(2 ** 52)))), { maxLength: 40 }),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
).map(([noise, outliers, level]) => {
  const x = Float64Array.from(noise, (v) => level + v);
  for (const [at, v] of outliers) if (x.length > 0) x[at % x.length] = v;
  return x;
});

function roundTrip(x: Float64Array, from = 0): Uint8Array {
  const out = new Float64Array(x.length);
  const { bytes } = check((w) => writeFrames(w, x, from, x.length), (r) => readFrames(r, out, from, x.length));
  assert.equal(bytes.length, framesSize(x, from, x.length));
  assert.deepEqual(out.subarray(from), x.subarray(from));
  return bytes;
}

describe('frames', () => {
  it('give back every value, and write the size they plan', () => {
    fc.assert(fc.property(noisy, fc.nat({ max: 3 }), (x, from) => {
      from = Math.min(from, x.length);
      fc.pre(framesSize(x, from, x.length) >= 0);
      roundTrip(x, from);
    }), SEEDED);
    roundTrip(Float64Array.of(-(2 ** 52), 0, 1, 2 ** 52 - 1)); // a spread of exactly 2^53 - 1
  });

  it('leave a few outliers out of the chunk as patches', () => {
    const x = Float64Array.from({ length: 128 }, (_, i) => (i * 37) % 16);
    const plain = roundTrip(x).length;
    x[5] = 20_000;
    x[77] = -3_000_000;
    const patched = roundTrip(x).length;
    // two patches: a count, two 7-bit positions, two values of 3 and 4 bytes; the chunk would be 23 bits wide without
    assert.ok(patched <= plain + 11, `${plain} bytes without outliers, ${patched} with two`);
  });

  it('pack each chunk as values or as differences, whichever is narrower', () => {
    // a value hovering around a level (values: 4 bits), then climbing by 1000 ± 7 a row (differences: 4 bits)
    const hover = Array.from({ length: 256 }, (_, i) => 5_000 + ((i * 7) % 16));
    let level = 6_000;
    const climb = Array.from({ length: 256 }, (_, i) => (level += 1000 + ((i * 5) % 15) - 7));
    const bytes = roundTrip(Float64Array.from([...hover, ...climb])).length;
    assert.ok(bytes <= 4 * (128 * 4 / 8 + 4), `${bytes} bytes`);
  });

  it('report a spread beyond 2^53 - 1', () => {
    assert.equal(framesSize(Float64Array.of(-MAX_SAFE, MAX_SAFE), 0, 2), -1);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors((r, n) => readFrames(r, new Float64Array(n), 0, n), 1000, 2000);
  });
});
