// Strings: every JavaScript string back exactly (empty, BOM, astral, lone surrogates), by a dictionary.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeStrings, encodeStrings } from '../../../src/telemetry/blocks/strings.ts';
import { SEEDED, shaped } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, failsWhenTruncated, roundTrip as check } from './codec-checks.ts';

const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }), // lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', '\uFEFFbom', '\u0000', 'ok', 'fault: E42', '\uD83D\uDE00', '\uD83D', '\uDE00', 'a\uD800b'),
);

function roundTrip(values: string[]): Uint8Array {
  const { back, bytes } = check((w) => encodeStrings(w, values), (r) => decodeStrings(r, values.length));
  assert.deepEqual(back, values);
  return bytes;
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
    failsOnlyWithFormatErrors(decodeStrings, 3000, 3000);
    failsWhenTruncated(shaped(anyString, 100), encodeStrings, decodeStrings);
  });
});
