// Float columns: every double back to the bit, and meter decimals (W with 0.1 resolution, zero by night, a slow %)
// coded as scaled integers at a few bits a value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeFloats, encodeFloats } from '../../../src/telemetry/blocks/floats.ts';
import { encodeXor } from '../../../src/telemetry/blocks/gorilla.ts';
import { SEEDED, anyDouble, bitsOf, decimals, oddDoubles, shaped } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, failsWhenTruncated, roundTrip as check } from './codec-checks.ts';

function roundTrip(values: Float64Array): Uint8Array {
  const { back, bytes } = check((w) => encodeFloats(w, values), (r) => decodeFloats(r, values.length));
  assert.deepEqual(bitsOf(back), bitsOf(values));
  return bytes;
}

const xorSize = (values: Float64Array) => {
  const w = new ByteWriter();
  encodeXor(w, values);
  return w.length;
};

/** A deterministic noisy walk in steps of 0.1 */
function walk(n: number, seed: number, spread: number, start: number): Float64Array {
  let x = seed;
  let k = Math.round(start * 10);
  return Float64Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    k += (x % (2 * spread + 1)) - spread;
    return k / 10;
  });
}

describe('floats: round trips', () => {
  it('give back every double to the bit: -0, subnormals, extremes, 0.1 + 0.2', () => {
    fc.assert(fc.property(shaped(anyDouble).map((a) => Float64Array.from(a)), (values) => { roundTrip(values); }), SEEDED);
    roundTrip(Float64Array.of());
    roundTrip(Float64Array.of(-0));
    roundTrip(Float64Array.of(0.1 + 0.2, 0.3, 0.1, 1e300, Number.MIN_VALUE, -0, 5e-324, 1.7976931348623157e308));
  });

  it('and what no parser produces: NaN payloads, infinities', () => {
    roundTrip(oddDoubles());
    roundTrip(Float64Array.from({ length: 300 }, (_, i) => (i % 7 ? i / 10 : oddDoubles()[i % 5])));
  });

  it('decimals with a few digits, in any mix', () => {
    fc.assert(fc.property(decimals, (values) => { roundTrip(values); }), SEEDED);
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 9 })), { maxLength: 300 }), (ks) => {
      roundTrip(Float64Array.from(ks, ([k, e]) => k / 10 ** e));
    }), SEEDED);
  });
});

describe('floats: compact for meter values', () => {
  const n = 8640;
  it('W with 0.1 resolution and noise: the bits of the steps, far below XOR', () => {
    const power = walk(n, 7, 40, 1500); // steps up to ±4.0 W: 80 tenths, 7 bits of spread
    const bytes = roundTrip(power).length;
    assert.ok(bytes <= n * 7 / 8 * 1.05, `${bytes} bytes`);
    assert.ok(bytes * 3 < xorSize(power), `${bytes} bytes, XOR ${xorSize(power)}`);
  });

  it('solar power exactly 0 all night costs almost nothing by night', () => {
    const day = walk(n / 2, 3, 40, 2000).map((v) => Math.abs(v));
    const solar = new Float64Array(n);
    solar.set(day, n / 4);
    const bytes = roundTrip(solar).length;
    assert.ok(bytes <= (n / 2) * 7 / 8 * 1.05 + 100, `${bytes} bytes`);
  });

  it('a state of charge in % with 0.1 resolution costs about a bit a value', () => {
    // charging (+0.1 on most rows), idle, discharging (-0.1 on some rows), idle, in turns
    let x = 1;
    let k = 500;
    const soc = Float64Array.from({ length: n }, (_, i) => {
      x = (x * 48271) % 2147483647;
      const phase = Math.floor(i / 900) % 4;
      if (phase === 0 && x % 10 < 7) k++;
      if (phase === 2 && x % 10 < 4) k--;
      return k / 10;
    });
    const bytes = roundTrip(soc).length;
    assert.ok(bytes <= n / 8 * 1.2, `${bytes} bytes`);
  });

  it('a few values that are not short decimals are exceptions, not a switch to XOR', () => {
    const power = walk(n, 5, 40, 1500);
    for (let i = 0; i < n; i += 1000) power[i] = Math.PI * i;
    const bytes = roundTrip(power).length;
    assert.ok(bytes <= n * 7 / 8 * 1.05 + 9 * 10, `${bytes} bytes`);
  });

  it('doubles that are not decimals go to XOR coding: no worse than XOR', () => {
    const noise = Float64Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 1000);
    assert.ok(roundTrip(noise).length <= xorSize(noise) + 1);
  });
});

describe('floats: corrupt input', () => {
  it('fails on random and truncated bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors(decodeFloats, 3000, 3000);
    failsWhenTruncated(shaped(anyDouble).map((a) => Float64Array.from(a)), encodeFloats, decodeFloats);
  });
});
