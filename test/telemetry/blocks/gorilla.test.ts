// XOR coding: every bit pattern back exactly, one bit for a repeated value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeXor, encodeXor } from '../../../src/telemetry/blocks/gorilla.ts';
import { SEEDED, anyDouble, bitsOf, oddDoubles, shaped } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, roundTrip as check } from './codec-checks.ts';

function roundTrip(values: Float64Array): Uint8Array {
  const { back, bytes } = check((w) => encodeXor(w, values), (r) => decodeXor(r, values.length));
  assert.deepEqual(bitsOf(back), bitsOf(values));
  return bytes;
}

describe('XOR coding', () => {
  it('gives back every double to the bit', () => {
    fc.assert(fc.property(shaped(anyDouble).map((a) => Float64Array.from(a)), (values) => { roundTrip(values); }), SEEDED);
    roundTrip(oddDoubles());
    roundTrip(Float64Array.of());
  });

  it('random bit patterns too', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff })), { maxLength: 300 }), (pairs) => {
      const words = Uint32Array.from(pairs.flat());
      roundTrip(new Float64Array(words.buffer));
    }), SEEDED);
  });

  it('costs a bit per repeated value', () => {
    const bytes = roundTrip(new Float64Array(8000).fill(Math.PI));
    assert.equal(bytes.length, 8 + 1000);
  });

  it('fails on corrupt bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors(decodeXor, 500, 2000);
  });
});
