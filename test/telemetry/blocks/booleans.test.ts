// Booleans and presence: exact round trips; one byte when constant, a few bytes when the value rarely changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeBools, encodeBools } from '../../../src/telemetry/blocks/booleans.ts';
import { SEEDED, isBlockFormatError, shaped } from './arbitraries.ts';

function roundTrip(values: Uint8Array): Uint8Array {
  const w = new ByteWriter(1);
  encodeBools(w, values);
  w.byte(0xee);
  const bytes = w.finish();
  const r = new ByteReader(bytes);
  assert.deepEqual(decodeBools(r, values.length), values);
  assert.equal(r.byte(), 0xee);
  r.done();
  return bytes.subarray(0, bytes.length - 1);
}

describe('booleans', () => {
  it('give back every sequence', () => {
    fc.assert(fc.property(shaped(fc.constantFrom(0, 1), 2000).map((a) => Uint8Array.from(a)), (v) => { roundTrip(v); }), SEEDED);
    roundTrip(new Uint8Array(0));
  });

  it('cost one byte when constant, a few when rarely changing, at most a bit a value', () => {
    assert.equal(roundTrip(new Uint8Array(8640)).length, 1);
    assert.equal(roundTrip(new Uint8Array(8640).fill(1)).length, 1);
    const rare = Uint8Array.from({ length: 8640 }, (_, i) => (Math.floor(i / 1000) % 2));
    assert.ok(roundTrip(rare).length <= 16, `${roundTrip(rare).length} bytes`);
    fc.assert(fc.property(fc.uint8Array({ min: 0, max: 1, maxLength: 3000 }), (v) => {
      assert.ok(roundTrip(v).length <= 1 + Math.ceil(v.length / 8));
    }), SEEDED);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 48 }), fc.integer({ min: 0, max: 5000 }), (bytes, n) => {
      try {
        decodeBools(new ByteReader(bytes), n);
      } catch (err) {
        assert.ok(isBlockFormatError(err), String(err));
      }
    }), { ...SEEDED, numRuns: 2000 });
  });
});
