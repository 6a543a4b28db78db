// XOR coding: every bit pattern back exactly, one bit for a repeated value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeXor, encodeXor } from '../../../src/telemetry/blocks/gorilla.ts';
import { SEEDED, anyDouble, bitsOf, isBlockFormatError, oddDoubles, shaped } from './arbitraries.ts';

function roundTrip(values: Float64Array): Uint8Array {
  const w = new ByteWriter(1);
  encodeXor(w, values);
  w.byte(0xee);
  const bytes = w.finish();
  const r = new ByteReader(bytes);
  const back = decodeXor(r, values.length);
  assert.equal(r.byte(), 0xee);
  r.done();
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
    assert.equal(bytes.length, 8 + 1000 + 1);
  });

  it('fails on corrupt bytes with BlockFormatError only', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: 500 }), (bytes, n) => {
      try {
        decodeXor(new ByteReader(bytes), n);
      } catch (err) {
        assert.ok(isBlockFormatError(err), String(err));
      }
    }), { ...SEEDED, numRuns: 2000 });
  });
});
