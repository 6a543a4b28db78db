// Integer sequences: exact round trips for every int64, compact for the shapes telemetry has, and a decoder that only
// ever fails with BlockFormatError.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeInts, encodeInts } from '../../../src/telemetry/blocks/integers.ts';
import { MAX_SAFE, SEEDED, int64s, safeInts } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, failsWhenTruncated, roundTrip as check } from './codec-checks.ts';

function roundTrip(values: Float64Array | BigInt64Array): { out: Float64Array | BigInt64Array; bytes: Uint8Array } {
  const { back, bytes } = check((w) => encodeInts(w, values), (r) => decodeInts(r, values.length));
  return { out: back, bytes };
}

const safe = (v: bigint) => v <= BigInt(MAX_SAFE) && v >= -BigInt(MAX_SAFE);

describe('integers: round trips', () => {
  it('gives back safe integer sequences exactly, as numbers', () => {
    fc.assert(fc.property(safeInts, (values) => {
      const { out } = roundTrip(values);
      assert.ok(out instanceof Float64Array);
      assert.deepEqual(out, values);
    }), SEEDED);
  });

  it('gives back every int64 exactly: numbers when all are safe, else bigints', () => {
    fc.assert(fc.property(int64s, (values) => {
      const { out } = roundTrip(values);
      if (values.every(safe)) assert.deepEqual(out, Float64Array.from(values, Number));
      else assert.deepEqual(out, values);
    }), SEEDED);
  });

  it('handles safe values whose steps are beyond 2^53 (the wide form) and the extremes of int64', () => {
    const cases = [
      [-MAX_SAFE, MAX_SAFE, -MAX_SAFE, 0, MAX_SAFE],
      [MAX_SAFE, -MAX_SAFE],
      [0, MAX_SAFE, 0, -MAX_SAFE],
    ];
    for (const c of cases) assert.deepEqual(roundTrip(Float64Array.from(c)).out, Float64Array.from(c));
    const extremes = BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n, -(2n ** 63n), 0n, 2n ** 63n - 1n, -1n);
    assert.deepEqual(roundTrip(extremes).out, extremes);
  });

  it('refuses what is not a safe integer', () => {
    for (const bad of [0.5, 2 ** 53, NaN, Infinity]) {
      assert.throws(() => encodeInts(new ByteWriter(), Float64Array.of(1, bad)), RangeError);
    }
  });
});

describe('integers: compact for telemetry shapes', () => {
  const n = 8640;
  it('regular steps cost a few bytes in all', () => {
    const clock = Float64Array.from({ length: n }, (_, i) => 1_767_225_600_000 + i * 10_000);
    assert.ok(roundTrip(clock).bytes.length <= 20, `${roundTrip(clock).bytes.length} bytes`);
  });

  it('regular steps with a gap and a few late points stay under 0.1 byte per value', () => {
    const clock = Float64Array.from({ length: n }, (_, i) => 1_767_225_600_000 + i * 10_000 + (i > 4000 ? 3_600_000 : 0) + (i % 1000 === 7 ? 13 : 0));
    const { bytes } = roundTrip(clock);
    assert.ok(bytes.length <= n * 0.1, `${bytes.length} bytes`);
  });

  it('a counter with small varying steps costs about the bits of its steps', () => {
    let c = 4_000_000_000;
    const counter = Float64Array.from({ length: n }, (_, i) => (c += (i * 7919) % 13));
    const { bytes } = roundTrip(counter);
    assert.ok(bytes.length <= n * (4 / 8) * 1.05, `${bytes.length} bytes`);
  });

  it('a rarely changing value costs a few bytes per change', () => {
    const state = Float64Array.from({ length: n }, (_, i) => [0, 1, 3, 1, 0][Math.floor(i / 1800)]);
    const { bytes } = roundTrip(state);
    assert.ok(bytes.length <= 24, `${bytes.length} bytes`);
  });
});

describe('integers: corrupt input', () => {
  it('fails on random and truncated bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors(decodeInts, 5000);
    failsWhenTruncated(fc.oneof(safeInts, int64s), encodeInts, decodeInts);
  });
});
