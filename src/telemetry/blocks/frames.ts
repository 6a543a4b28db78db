// Frame-of-reference packing in chunks of 128, the last stage of every integer sequence. A chunk stores a base and
// the bits of (value - base) at one width, so a chunk of equal values costs two bytes. Each chunk also chooses to
// store its values or their differences (from the value before it; the first chunk's first from 0): meter readings
// hover by night and move by day, and which is narrower changes within a block. A few outliers (a kettle switched
// on, sunrise after a night of zeros) would widen the whole chunk: the encoder may leave up to 16 of them out as
// patches, stored after the chunk as (position, value - base), when that makes the chunk smaller.
//
//   head byte: width (0..53) | 64 patched | 128 differences;  svarint base;  the packed bits;
//   if patched: varint count, 7-bit positions, svarint (value - base) each
import { ByteReader, ByteWriter, bitWidth, pack, packedSize, svarintSize, unpack, varintSize } from './bits.ts';
import { BlockFormatError } from './errors.ts';

const CHUNK = 128;
const MAX_PATCHES = 16;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_WIDTH = 53;
const PATCHED = 64;
const DIFFERENCES = 128;

interface Plan {
  base: number;
  width: number;
  /** patches: the `low` smallest and `high` largest values of the chunk */
  low: number;
  high: number;
  /** bytes; -1: the spread is beyond 2^53 - 1 */
  size: number;
}

/** What one encoder pass reuses from chunk to chunk: a chunk's differences, a sorted copy, two plans. */
interface Scratch { differences: Float64Array; sorted: Float64Array; plain: Plan; delta: Plan }

const newPlan = (): Plan => ({ base: 0, width: 0, low: 0, high: 0, size: 0 });
/** encoding runs to its end without yielding: one scratch serves every pass of the thread */
const scratch: Scratch = { differences: new Float64Array(CHUNK), sorted: new Float64Array(CHUNK), plain: newPlan(), delta: newPlan() };

/**
 * Plans the packing of v[at .. at + len), whose least and greatest values are min and max, into `plan`. `sorted`:
 * scratch for the patch search, or undefined to plan without patches (a quick estimate).
 */
function planValues(v: Float64Array, at: number, len: number, min: number, max: number, sorted: Float64Array | undefined, plan: Plan): Plan {
  plan.low = 0;
  plan.high = 0;
  if (!(max - min <= MAX_SAFE)) {
    plan.size = -1;
    return plan;
  }
  plan.base = min;
  plan.width = bitWidth(max - min);
  plan.size = 1 + svarintSize(min) + packedSize(len, plan.width);
  // patches cannot pay in small or narrow chunks
  if (!sorted || plan.width <= 3 || len < 32 || !mayPatch(v, at, len, min, max - min)) return plan;
  const s = sorted.subarray(0, len);
  s.set(v.subarray(at, at + len));
  s.sort();
  for (let low = 0; low <= MAX_PATCHES; low++) {
    const base = s[low];
    const head = 1 + svarintSize(base);
    let high = low === 0 ? 1 : 0;
    let width = bitWidth(s[len - 1 - high] - base);
    while (low + high <= MAX_PATCHES) {
      // of the counts of high patches that leave one width, the least makes the smallest chunk: only it is sized
      let size = head + packedSize(len, width) + varintSize(low + high) + packedSize(low + high, 7);
      if (size < plan.size) {
        for (let i = 0; i < low; i++) size += svarintSize(s[i] - base);
        for (let i = len - high; i < len; i++) size += svarintSize(s[i] - base);
        if (size < plan.size) {
          plan.base = base;
          plan.width = width;
          plan.low = low;
          plan.high = high;
          plan.size = size;
        }
      }
      const was = width;
      while (width === was && low + ++high <= MAX_PATCHES) width = bitWidth(s[len - 1 - high] - base);
    }
  }
  return plan;
}

const bins = new Int32Array(8);

/**
 * Whether patches could pay (a quick test before sorting): a chunk one bit narrower needs all but ~5 values within
 * half the spread, 5 adjacent eighths of it; two bits narrower, all but 16 within a quarter, 3 adjacent eighths.
 */
function mayPatch(v: Float64Array, at: number, len: number, min: number, spread: number): boolean {
  bins.fill(0);
  for (let i = at; i < at + len; i++) bins[Math.min(7, Math.floor(((v[i] - min) / spread) * 8))]++;
  for (let i = 0; i < 8; i++) {
    const three = bins[i] + (i < 7 ? bins[i + 1] : 0) + (i < 6 ? bins[i + 2] : 0);
    const five = three + (i < 5 ? bins[i + 3] + bins[i + 4] : 0);
    if (three >= len - MAX_PATCHES || five >= len - 5) return true;
  }
  return false;
}

/**
 * Plans x[c .. c + len) as values (scratch.plain) and as differences (scratch.delta, the differences left in
 * scratch.differences); returns the smaller plan, or undefined when neither fits 2^53 - 1. `patches` false: planned
 * without patches.
 */
function planChunk(x: Float64Array, from: number, c: number, len: number, patches: boolean): Plan | undefined {
  const d = scratch.differences;
  // one pass: the differences, and the least and greatest of the values and of the differences
  let min = x[c];
  let max = min;
  const first = x[c] - (c > from ? x[c - 1] : 0);
  d[0] = first;
  let dmin = first;
  let dmax = first;
  for (let i = 1; i < len; i++) {
    const value = x[c + i];
    const difference = value - x[c + i - 1];
    d[i] = difference;
    if (value < min) min = value;
    else if (value > max) max = value;
    if (difference < dmin) dmin = difference;
    else if (difference > dmax) dmax = difference;
  }
  const sorted = patches ? scratch.sorted : undefined;
  const plain = planValues(x, c, len, min, max, sorted, scratch.plain);
  const safe = dmax <= MAX_SAFE && dmin >= -MAX_SAFE;
  const delta = safe ? planValues(d, 0, len, dmin, dmax, sorted, scratch.delta) : undefined;
  if (delta && delta.size >= 0 && (plain.size < 0 || delta.size < plain.size)) return delta;
  return plain.size >= 0 ? plain : undefined;
}

/**
 * Bytes of the packing of x[from .. to), or -1 when a chunk's spread is beyond 2^53 - 1. `patches` false: a quicker
 * estimate, planned without patches (at least the size written).
 */
export function framesSize(x: Float64Array, from: number, to: number, patches = true): number {
  let size = 0;
  for (let c = from; c < to; c += CHUNK) {
    const plan = planChunk(x, from, c, Math.min(CHUNK, to - c), patches);
    if (!plan) return -1;
    size += plan.size;
  }
  return size;
}

/** Packs x[from .. to); every chunk's spread must be within 2^53 - 1 (framesSize() >= 0). */
export function writeFrames(w: ByteWriter, x: Float64Array, from: number, to: number): void {
  for (let c = from; c < to; c += CHUNK) {
    const len = Math.min(CHUNK, to - c);
    const plan = planChunk(x, from, c, len, true)!;
    const { base, width } = plan;
    const differences = plan === scratch.delta;
    const values = differences ? scratch.differences : x.subarray(c, c + len);
    const patches = plan.low + plan.high;
    w.byte(width | (patches > 0 ? PATCHED : 0) | (differences ? DIFFERENCES : 0));
    w.svarint(base);
    if (patches === 0) {
      pack(w, values, 0, len, base, width);
      continue;
    }
    // values outside [base, base + 2^width) are the patches; the packed bits hold 0 in their place
    const top = 2 ** width;
    const at: number[] = [];
    const kept = new Float64Array(len);
    for (let i = 0; i < len; i++) {
      const d = values[i] - base;
      if (d < 0 || d >= top) at.push(i);
      else kept[i] = d;
    }
    pack(w, kept, 0, len, 0, width);
    w.varint(at.length);
    for (const i of at) w.bits(i, 7);
    w.align();
    for (const i of at) w.svarint(values[i] - base);
  }
}

/** Reads what writeFrames() wrote into out[from .. to), each value divided by `divisor` (in the chunk, while cached). */
/** Reads what writeFrames() wrote into out[from .. to), each value divided by `divisor` (in the chunk, while cached). */
export function readFrames(r: ByteReader, out: Float64Array, from: number, to: number, divisor = 1): void {
  let last = 0; // the last value of the chunk before, not divided
  for (let c = from; c < to; c += CHUNK) {
    const head = r.byte();
    const width = head & ~(PATCHED | DIFFERENCES);
    if (width > MAX_WIDTH) throw new BlockFormatError(`bit width ${width}`);
    const base = r.svarint();
    const len = Math.min(CHUNK, to - c);
    const end = c + len;
    unpack(r, out, c, len, base, width);
    if (head & PATCHED) {
      const count = r.count(len);
      const at: number[] = [];
      for (let k = 0; k < count; k++) at.push(r.bits(7));
      r.align();
      for (const i of at) {
        if (i >= len) throw new BlockFormatError('patch position out of range');
        out[c + i] = base + r.svarint();
      }
    }
    if (head & DIFFERENCES) {
      let value = last;
      for (let i = c; i < end; i++) {
        value += out[i];
        out[i] = value / divisor;
      }
      last = value;
    } else {
      last = out[end - 1];
      if (divisor !== 1) for (let i = c; i < end; i++) out[i] /= divisor;
    }
  }
}
