// The checks every codec's tests share: a round trip that must read exactly what was written, and decoders that meet
// random or truncated bytes with BlockFormatError only.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { SEEDED, isBlockFormatError } from './arbitraries.ts';

/** Writes, then reads back; the reader must stop exactly where the writer did. Returns what was read and the bytes. */
export function roundTrip<T>(write: (w: ByteWriter) => void, read: (r: ByteReader) => T): { back: T; bytes: Uint8Array } {
  const w = new ByteWriter(1);
  write(w);
  w.byte(0xee);
  const all = w.finish();
  const r = new ByteReader(all);
  const back = read(r);
  assert.equal(r.byte(), 0xee, 'reads exactly what was written');
  r.done();
  return { back, bytes: all.subarray(0, all.length - 1) };
}

/** `read` of random bytes as n values throws nothing but BlockFormatError. */
export function failsOnlyWithFormatErrors(read: (r: ByteReader, n: number) => unknown, maxN: number, numRuns = 3000): void {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: maxN }), (bytes, n) => {
    try {
      read(new ByteReader(bytes), n);
    } catch (err) {
      assert.ok(isBlockFormatError(err), String(err));
    }
  }), { ...SEEDED, numRuns });
}

/** What `write` wrote for each input of `inputs`, cut short anywhere, makes `read` throw BlockFormatError. */
export function failsWhenTruncated<T extends { length: number }>(inputs: fc.Arbitrary<T>, write: (w: ByteWriter, v: T) => void, read: (r: ByteReader, n: number) => unknown): void {
  fc.assert(fc.property(inputs, fc.nat(), (values, cut) => {
    const w = new ByteWriter();
    write(w, values);
    const bytes = w.finish();
    fc.pre(bytes.length > 0);
    assert.throws(() => read(new ByteReader(bytes.subarray(0, cut % bytes.length)), values.length), isBlockFormatError);
  }), SEEDED);
}
