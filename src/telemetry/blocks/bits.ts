// The bytes under every codec: a growing writer and a bounds-checked reader with LEB128 varints (unsigned, and signed
// by zig-zag), and bit fields packed least significant bit first. Integers are JavaScript numbers up to 2^53 - 1:
// varints are computed with arithmetic, bit fields in pieces of at most 24 bits, so no step needs more than int32.
import { BlockFormatError } from './errors.ts';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const TWO24 = 0x1000000;
const TWO32 = 0x100000000;

/** Which half of a double is which in a Uint32Array view of a Float64Array (the machine's byte order). */
export const LO = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1 ? 0 : 1;
export const HI = 1 - LO;

/** The 32-bit words of a Float64Array's values, two per value (LO and HI): their exact bits. */
export function wordsOf(values: Float64Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
}

/** Bits needed for 0 <= v <= 2^53 - 1 (0 for 0). */
export function bitWidth(v: number): number {
  return v < TWO32 ? 32 - Math.clz32(v) : 64 - Math.clz32(Math.floor(v / TWO32));
}

/** Bytes of varint(v). */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) { v = Math.floor(v / 128); n++; }
  return n;
}

/** Bytes of svarint(v): the zig-zag of v is 2|v| or 2|v| - 1. */
export function svarintSize(v: number): number {
  return varintSize(v < 0 ? -2 * v - 1 : 2 * v);
}

export class ByteWriter {
  private buf: Uint8Array;
  private at = 0;
  private acc = 0;
  private accBits = 0;

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }

  get length(): number {
    return this.at;
  }

  private room(k: number): void {
    if (this.at + k <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + k));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  /** 0 <= v <= 2^53 - 1 */
  varint(v: number): void {
    this.room(8);
    while (v >= 128) {
      this.buf[this.at++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.buf[this.at++] = v;
  }

  /** |v| <= 2^53 - 1, zig-zag: the sign is the lowest bit; computed without forming 2|v| (which could be inexact). */
  svarint(v: number): void {
    const neg = v < 0;
    const m = neg ? -v - 1 : v;
    const rest = Math.floor(m / 64);
    this.byte((((m % 64) << 1) | (neg ? 1 : 0)) | (rest > 0 ? 128 : 0));
    if (rest > 0) this.varint(rest);
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** 0 <= v < 2^32, little-endian */
  u32(v: number): void {
    this.room(4);
    this.buf[this.at++] = v & 255;
    this.buf[this.at++] = (v >>> 8) & 255;
    this.buf[this.at++] = (v >>> 16) & 255;
    this.buf[this.at++] = v >>> 24;
  }

  /** k <= 24 bits of 0 <= v < 2^k; call align() before the next byte-wise write */
  bits(v: number, k: number): void {
    this.acc |= v << this.accBits;
    this.accBits += k;
    while (this.accBits >= 8) {
      this.byte(this.acc & 255);
      this.acc >>>= 8;
      this.accBits -= 8;
    }
  }

  /** k <= 32 bits of 0 <= v < 2^k */
  bits32(v: number, k: number): void {
    if (k <= 24) this.bits(v, k);
    else {
      this.bits(v & 0xffffff, 24);
      this.bits(v >>> 24, k - 24);
    }
  }

  /** k <= 53 bits of 0 <= v < 2^k */
  wideBits(v: number, k: number): void {
    while (k > 24) {
      this.bits(v % TWO24, 24);
      v = Math.floor(v / TWO24);
      k -= 24;
    }
    this.bits(v, k);
  }

  /** Pads the bits written so far to a whole byte. */
  align(): void {
    if (this.accBits > 0) this.byte(this.acc & 255);
    this.acc = 0;
    this.accBits = 0;
  }

  finish(): Uint8Array {
    this.align();
    return this.buf.slice(0, this.at);
  }
}

export class ByteReader {
  private acc = 0;
  private accBits = 0;

  constructor(readonly bytes: Uint8Array, public pos = 0, readonly end = bytes.length) {}

  get left(): number {
    return this.end - this.pos;
  }

  byte(): number {
    if (this.pos >= this.end) throw new BlockFormatError('truncated');
    return this.bytes[this.pos++];
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      v += (b & 127) * mul;
      if (b < 128) {
        if (v > MAX_SAFE) break;
        return v;
      }
      mul *= 128;
    }
    throw new BlockFormatError('varint out of range');
  }

  /** A varint that counts something of at most `max`. */
  count(max: number): number {
    const v = this.varint();
    if (v > max) throw new BlockFormatError(`count ${v} over ${max}`);
    return v;
  }

  svarint(): number {
    const b = this.byte();
    let m = (b & 127) >>> 1;
    if (b >= 128) {
      const rest = this.varint();
      if (rest > (MAX_SAFE - m) / 64) throw new BlockFormatError('varint out of range');
      m += rest * 64;
    }
    if ((b & 1) === 0) return m;
    if (m === MAX_SAFE) throw new BlockFormatError('varint out of range');
    return -m - 1;
  }

  /** The next n bytes, as a view. */
  take(n: number): Uint8Array {
    if (n > this.end - this.pos) throw new BlockFormatError('truncated');
    this.pos += n;
    return this.bytes.subarray(this.pos - n, this.pos);
  }

  u32(): number {
    const b = this.take(4);
    return (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
  }

  /** k <= 24 bits */
  bits(k: number): number {
    while (this.accBits < k) {
      this.acc |= this.byte() << this.accBits;
      this.accBits += 8;
    }
    const v = this.acc & ((1 << k) - 1);
    this.acc >>>= k;
    this.accBits -= k;
    return v;
  }

  /** k <= 32 bits, as an unsigned number */
  bits32(k: number): number {
    if (k <= 24) return this.bits(k);
    const low = this.bits(24);
    return low + this.bits(k - 24) * TWO24;
  }

  /** Drops the rest of a partly read byte. */
  align(): void {
    this.acc = 0;
    this.accBits = 0;
  }

  /** Throws unless everything up to `end` was read. */
  done(): void {
    if (this.pos !== this.end) throw new BlockFormatError(`${this.end - this.pos} bytes left over`);
  }
}

/** Writes values[from .. from + count) - base, each in `width` bits, then pads to a byte. */
export function pack(w: ByteWriter, values: Float64Array, from: number, count: number, base: number, width: number): void {
  if (width === 0) return;
  for (let i = from; i < from + count; i++) w.wideBits(values[i] - base, width);
  w.align();
}

/** Bytes that pack() writes. */
export function packedSize(count: number, width: number): number {
  return Math.ceil((count * width) / 8);
}

// unpack()'s aligned copy of one chunk's bits, read as 32-bit words: 128 values of up to 30 bits, and a spare word
const scratchBytes = new Uint8Array(128 * 4 + 8);
const scratchWords = new Uint32Array(scratchBytes.buffer);
const LITTLE_ENDIAN = LO === 0;

/** Reads what pack() wrote into out[o .. o + count), adding base. */
export function unpack(r: ByteReader, out: Float64Array, o: number, count: number, base: number, width: number): void {
  if (width === 0) {
    out.fill(base, o, o + count);
    return;
  }
  const size = packedSize(count, width);
  if (size > r.left) throw new BlockFormatError('truncated');
  const b = r.bytes;
  const end = o + count;
  if (width <= 30 && count <= 128 && LITTLE_ENDIAN) {
    // the hot path: the bits as aligned 32-bit words, shifted out of an int32 accumulator, one load per word
    scratchBytes.set(b.subarray(r.pos, r.pos + size));
    const words = scratchWords;
    const mask = (1 << width) - 1;
    let k = 0;
    let acc = words[0];
    let bits = 32;
    for (let i = o; i < end; i++) {
      let v: number;
      if (bits >= width) {
        v = acc & mask;
        acc >>>= width;
        bits -= width;
        if (bits === 0) {
          acc = words[++k];
          bits = 32;
        }
      } else {
        const next = words[++k];
        v = (acc | (next << bits)) & mask;
        acc = next >>> (width - bits);
        bits += 32 - width;
      }
      out[i] = base + v;
    }
  } else {
    let p = r.pos;
    let acc = 0;
    let n = 0;
    for (let i = o; i < end; i++) {
      let v = 0;
      let mul = 1;
      for (let k = width; k > 0; k -= 24) {
        const piece = k > 24 ? 24 : k;
        while (n < piece) {
          acc |= b[p++] << n;
          n += 8;
        }
        v += (acc & ((1 << piece) - 1)) * mul;
        acc >>>= piece;
        n -= piece;
        mul *= TWO24;
      }
      out[i] = base + v;
    }
  }
  r.pos += size;
}
