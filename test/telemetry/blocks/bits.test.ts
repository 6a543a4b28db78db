// The bytes under the codecs: varints against a BigInt reference of LEB128 and zig-zag, bit packing at every width,
// and a reader that refuses to run past its end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter, bitWidth, pack, packedSize, svarintSize, unpack, varintSize } from '../../../src/telemetry/blocks/bits.ts';
import { BlockFormatError } from '../../../src/telemetry/blocks/errors.ts';
import { MAX_SAFE, SEEDED, safeInt } from './arbitraries.ts';

/** LEB128 of a non-negative bigint, the reference */
function leb128(z: bigint): number[] {
  const out: number[] = [];
  do {
    const low = Number(z & 127n);
    z >>= 7n;
    out.push(z > 0n ? low | 128 : low);
  } while (z > 0n);
  return out;
}
const zigzag = (v: bigint): bigint => (v < 0n ? -2n * v - 1n : 2n * v);

describe('bits: varints', () => {
  it('writes unsigned varints as LEB128 and reads them back', () => {
    fc.assert(fc.property(fc.oneof(fc.maxSafeNat(), fc.constantFrom(0, 127, 128, 2 ** 32, MAX_SAFE)), (v) => {
      const w = new ByteWriter(1);
      w.varint(v);
      const bytes = w.finish();
      assert.deepEqual([...bytes], leb128(BigInt(v)));
      assert.equal(varintSize(v), bytes.length);
      const r = new ByteReader(bytes);
      assert.equal(r.varint(), v);
      r.done();
    }), SEEDED);
  });

  it('writes signed varints as zig-zag LEB128 over the whole safe range', () => {
    fc.assert(fc.property(safeInt, (v) => {
      const w = new ByteWriter(1);
      w.svarint(v);
      const bytes = w.finish();
      assert.deepEqual([...bytes], leb128(zigzag(BigInt(v))));
      assert.equal(svarintSize(v), bytes.length);
      const r = new ByteReader(bytes);
      assert.equal(r.svarint(), v);
      r.done();
    }), SEEDED);
  });

  it('refuses varints beyond 2^53 - 1 and truncated ones', () => {
    const overlong = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0];
    for (const bad of [leb128(2n ** 53n), leb128(2n ** 60n), overlong, [0x80, 0x80]]) {
      assert.throws(() => new ByteReader(Uint8Array.from(bad)).varint(), BlockFormatError, String(bad));
    }
    for (const bad of [leb128(zigzag(2n ** 53n)), leb128(zigzag(-(2n ** 53n))), [0x80, ...overlong], [0x81]]) {
      assert.throws(() => new ByteReader(Uint8Array.from(bad)).svarint(), BlockFormatError, String(bad));
    }
    assert.throws(() => new ByteReader(Uint8Array.of(5)).count(4), BlockFormatError);
    assert.throws(() => new ByteReader(Uint8Array.of(1, 2)).take(3), BlockFormatError);
    assert.throws(() => new ByteReader(Uint8Array.of(1, 2), 0, 1).u32(), BlockFormatError);
  });
});

describe('bits: packing', () => {
  it('packs values at every width from 0 to 53 and unpacks them with their base', () => {
    const case_ = fc.integer({ min: 0, max: 53 }).chain((width) => fc.tuple(
      fc.constant(width),
      fc.array(fc.bigInt({ min: 0n, max: (1n << BigInt(width)) - 1n }).map(Number), { maxLength: 300 }),
      fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    ));
    fc.assert(fc.property(case_, ([width, values, base]) => {
      const x = Float64Array.from(values, (v) => v + base);
      fc.pre(values.every((v, i) => x[i] - base === v));
      const w = new ByteWriter(1);
      w.byte(7);
      pack(w, x, 0, x.length, base, width);
      w.byte(9);
      const bytes = w.finish();
      assert.equal(bytes.length, 2 + packedSize(x.length, width));
      const r = new ByteReader(bytes);
      assert.equal(r.byte(), 7);
      const out = new Float64Array(x.length + 2).fill(-1);
      unpack(r, out, 1, x.length, base, width);
      assert.deepEqual(out.subarray(1, x.length + 1), x);
      assert.equal(out[0], -1);
      assert.equal(out[x.length + 1], -1);
      assert.equal(r.byte(), 9);
      r.done();
      if (width > 0 && x.length > 0) {
        const short = new ByteReader(bytes, 1, bytes.length - 2);
        assert.throws(() => unpack(short, out, 0, x.length, base, width), BlockFormatError);
      }
    }), SEEDED);
  });

  it('measures bit widths', () => {
    fc.assert(fc.property(fc.maxSafeNat(), (v) => {
      assert.equal(bitWidth(v), v === 0 ? 0 : BigInt(v).toString(2).length);
    }), SEEDED);
    assert.deepEqual([0, 1, 2, 255, 256, 2 ** 32 - 1, 2 ** 32, MAX_SAFE].map(bitWidth), [0, 1, 2, 8, 9, 32, 33, 53]);
  });

  it('writes and reads bit fields across byte edges', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 24 }).chain((k) => fc.tuple(fc.constant(k), fc.integer({ min: 0, max: 2 ** k - 1 })))), (fields) => {
      const w = new ByteWriter(1);
      for (const [k, v] of fields) w.bits(v, k);
      const r = new ByteReader(w.finish());
      for (const [k, v] of fields) assert.equal(r.bits(k), v);
    }), SEEDED);
  });
});
