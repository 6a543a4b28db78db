// Strings: every JavaScript string back exactly (empty, BOM, astral, lone surrogates), by a dictionary.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeStrings, encodeStrings } from '../../../src/telemetry/blocks/strings.ts';
import { SEEDED, isBlockFormatError, shaped } from './arbitraries.ts';

const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }), // lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', '\uFEFFbom', '\u0000', 'ok', 'fault: E42', '\uD83D\uDE00', '\uD83D', '\uDE00', 'a\uD800b'),
);

function roundTrip(values: string[]): Uint8Array {
  const w = new ByteWriter(1);
  encodeStrings(w, values);
  w.byte(0xee);
  const bytes = w.finish();
  const r = new ByteReader(bytes);
  assert.deepEqual(decodeStrings(r, values.length), values);
  assert.equal(r.byte(), 0xee);
  r.done();
  return bytes.subarray(0, bytes.length - 1);
}

describe('strings', () => {
  it('give back every string exactly', () => {
    fc.assert(fc.property(shaped(anyString, 300), (v) => { roundTrip(v); }), SEEDED);
    roundTrip([]);
    roundTrip(['\uDBFF', '\uDC00']); // a lone high then a lone low: a pair only when joined
    roundTrip(['']);
  });

  it('store each distinct value once: a rarely changing status costs a few bytes', () => {
    const status = Array.from({ length: 8640 }, (_, i) => ['standby', 'producing', 'producing', 'derating: temperature'][Math.floor(i / 2200)]);
    const bytes = roundTrip(status).length;
    assert.ok(bytes <= 60, `${bytes} bytes`);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: 3000 }), (bytes, n) => {
      try {
        decodeStrings(new ByteReader(bytes), n);
      } catch (err) {
        assert.ok(isBlockFormatError(err), String(err));
      }
    }), { ...SEEDED, numRuns: 3000 });
    fc.assert(fc.property(shaped(anyString, 100), fc.nat(), (values, cut) => {
      const w = new ByteWriter();
      encodeStrings(w, values);
      const bytes = w.finish();
      fc.pre(bytes.length > 0);
      assert.throws(() => decodeStrings(new ByteReader(bytes.subarray(0, cut % bytes.length)), values.length), isBlockFormatError);
    }), SEEDED);
  });
});
