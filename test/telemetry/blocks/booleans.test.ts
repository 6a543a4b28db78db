// Booleans and presence: exact round trips; one byte when constant, a few bytes when the value rarely changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeBools, encodeBools } from '../../../src/telemetry/blocks/booleans.ts';
import { SEEDED, shaped } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, roundTrip as check } from './codec-checks.ts';

function roundTrip(values: Uint8Array): Uint8Array {
  const { back, bytes } = check((w) => encodeBools(w, values), (r) => decodeBools(r, values.length));
  assert.deepEqual(back, values);
  return bytes;
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
    failsOnlyWithFormatErrors(decodeBools, 5000, 2000);
  });
});
