// Frame-of-reference packing in chunks of 128, the last stage of every integer sequence. A chunk stores a base and
// the bits of (value - base) at one width, so a chunk of equal values costs two bytes. A few outliers (a kettle
// switched on, sunrise after a night of zeros) would widen the whole chunk: the encoder may leave up to 16 of them
// out as patches, stored after the chunk as (position, value - base), when that makes the chunk smaller.
import { ByteReader, ByteWriter, bitWidth, pack, packedSize, svarintSize, unpack, varintSize } from './bits.ts';
import { BlockFormatError } from './errors.ts';

const CHUNK = 128;
const MAX_PATCHES = 16;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_WIDTH = 53;
const PATCHED = 64;

interface Plan {
  base: number;
  width: number;
  /** patches: the `low` smallest and `high` largest values of the chunk */
  low: number;
  high: number;
  size: number;
}

/**
 * How to pack x[c .. end); undefined when its spread is beyond 2^53 - 1. `sorted`: scratch of CHUNK values, or
 * undefined to plan without patches (a quick estimate).
 */
function planChunk(x: Float64Array, c: number, end: number, sorted: Float64Array | undefined): Plan | undefined {
  const len = end - c;
  let min = x[c];
  let max = min;
  for (let i = c + 1; i < end; i++) {
    const v = x[i];
    if (v < min) min = v;
    else if (v > max) max = v;
  }
  if (!(max - min <= MAX_SAFE)) return undefined;
  const width = bitWidth(max - min);
  const best: Plan = { base: min, width, low: 0, high: 0, size: 1 + svarintSize(min) + packedSize(len, width) };
  // patches cannot pay in small or narrow chunks
  if (!sorted || width <= 3 || len < 32 || !mayPatch(x, c, end, min, max - min)) return best;
  const s = sorted.subarray(0, len);
  s.set(x.subarray(c, end));
  s.sort();
  for (let low = 0; low <= MAX_PATCHES; low++) {
    for (let high = low === 0 ? 1 : 0; low + high <= MAX_PATCHES; high++) {
      const base = s[low];
      const w = bitWidth(s[len - 1 - high] - base);
      let size = 1 + svarintSize(base) + packedSize(len, w) + varintSize(low + high) + packedSize(low + high, 7);
      if (size >= best.size) continue;
      for (let i = 0; i < low; i++) size += svarintSize(s[i] - base);
      for (let i = len - high; i < len; i++) size += svarintSize(s[i] - base);
      if (size < best.size) Object.assign(best, { base, width: w, low, high, size });
    }
  }
  return best;
}

const bins = new Int32Array(8);

/**
 * Whether patches could pay (a quick test before sorting): a chunk one bit narrower needs all but ~5 values within
 * half the spread, 5 adjacent eighths of it; two bits narrower, all but 16 within a quarter, 3 adjacent eighths.
 */
function mayPatch(x: Float64Array, c: number, end: number, min: number, spread: number): boolean {
  bins.fill(0);
  for (let i = c; i < end; i++) bins[Math.min(7, Math.floor(((x[i] - min) / spread) * 8))]++;
  const len = end - c;
  for (let i = 0; i < 8; i++) {
    const three = bins[i] + (i < 7 ? bins[i + 1] : 0) + (i < 6 ? bins[i + 2] : 0);
    const five = three + (i < 5 ? bins[i + 3] + bins[i + 4] : 0);
    if (three >= len - MAX_PATCHES || five >= len - 5) return true;
  }
  return false;
}

/**
 * Bytes of the packing of x[from .. to), or -1 when a chunk's spread is beyond 2^53 - 1. `patches` false: a quicker
 * estimate, planned without patches (at least the size written).
 */
export function framesSize(x: Float64Array, from: number, to: number, patches = true): number {
  const sorted = patches ? new Float64Array(CHUNK) : undefined;
  let size = 0;
  for (let c = from; c < to; c += CHUNK) {
    const plan = planChunk(x, c, Math.min(c + CHUNK, to), sorted);
    if (!plan) return -1;
    size += plan.size;
  }
  return size;
}

/** Packs x[from .. to); every chunk's spread must be within 2^53 - 1 (framesSize() >= 0). */
export function writeFrames(w: ByteWriter, x: Float64Array, from: number, to: number): void {
  const sorted = new Float64Array(CHUNK);
  for (let c = from; c < to; c += CHUNK) {
    const end = Math.min(c + CHUNK, to);
    const { base, width, low, high } = planChunk(x, c, end, sorted)!;
    const patches = low + high;
    w.byte(width | (patches > 0 ? PATCHED : 0));
    w.svarint(base);
    if (patches === 0) {
      pack(w, x, c, end - c, base, width);
      continue;
    }
    // values outside [base, base + 2^width) are the patches; the packed bits hold 0 in their place
    const top = 2 ** width;
    const at: number[] = [];
    const kept = new Float64Array(end - c);
    for (let i = c; i < end; i++) {
      const d = x[i] - base;
      if (d < 0 || d >= top) at.push(i - c);
      else kept[i - c] = d;
    }
    pack(w, kept, 0, end - c, 0, width);
    w.varint(at.length);
    for (const i of at) w.bits(i, 7);
    w.align();
    for (const i of at) w.svarint(x[c + i] - base);
  }
}

export function readFrames(r: ByteReader, out: Float64Array, from: number, to: number): void {
  for (let c = from; c < to; c += CHUNK) {
    const head = r.byte();
    const width = head & ~PATCHED;
    if (width > MAX_WIDTH) throw new BlockFormatError(`bit width ${width}`);
    const base = r.svarint();
    const len = Math.min(CHUNK, to - c);
    unpack(r, out, c, len, base, width);
    if ((head & PATCHED) === 0) continue;
    const count = r.count(len);
    const at: number[] = [];
    for (let k = 0; k < count; k++) at.push(r.bits(7));
    r.align();
    for (const i of at) {
      if (i >= len) throw new BlockFormatError('patch position out of range');
      out[c + i] = base + r.svarint();
    }
  }
}
