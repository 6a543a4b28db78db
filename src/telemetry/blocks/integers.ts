// Sequences of 64-bit integers: the codec of integer fields, and the stage under every other codec (timestamps, the
// scaled decimals of floats, run lengths, dictionary indices).
//
// A sequence is first differenced 0, 1 or 2 times (raw values; deltas, for counters; deltas of deltas, for regular
// timestamps), the first `order` values kept aside as seeds. What remains is either packed as it is, or as runs
// (value, length) when it repeats, then packed by frames of reference (frames.ts). The encoder estimates every shape
// and writes the smallest.
//
// Values within ±(2^53 - 1) whose differences stay there take the fast path in doubles. Anything else (values or
// steps beyond 2^53) goes the wide way: 64-bit differences with wrap-around, zig-zag, and the high and low 32-bit
// halves each coded as a sequence of their own.
import { ByteReader, ByteWriter, svarintSize, varintSize } from './bits.ts';
import { framesSize, readFrames, writeFrames } from './frames.ts';
import { BlockFormatError } from './errors.ts';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** mode byte: bits 0-1 the order, then these flags */
const RUNS = 4;
const WIDE = 8;

/** x = the order-th differences of v after `order` seeds; false when a difference is beyond ±(2^53 - 1). */
function difference(v: Float64Array, order: number, x: Float64Array): boolean {
  const n = v.length;
  x[0] = v[0];
  if (order === 0) {
    x.set(v);
    return true;
  }
  for (let i = 1; i < n; i++) {
    const d = v[i] - v[i - 1];
    if (!(d <= MAX_SAFE && d >= -MAX_SAFE)) return false;
    x[i] = d;
  }
  if (order === 1) return true;
  for (let i = n - 1; i >= 2; i--) {
    const dd = x[i] - x[i - 1];
    if (!(dd <= MAX_SAFE && dd >= -MAX_SAFE)) return false;
    x[i] = dd;
  }
  return true;
}

/** Counts the runs of x[from .. to) and, when `values` is given, fills values and lengths - 1. */
function runs(x: Float64Array, from: number, to: number, values?: Float64Array, lengths?: Float64Array): number {
  let count = 0;
  let start = from;
  for (let i = from + 1; i <= to; i++) {
    if (i < to && x[i] === x[start]) continue;
    if (values && lengths) {
      values[count] = x[start];
      lengths[count] = i - start - 1;
    }
    count++;
    start = i;
  }
  return count;
}

interface Shape { order: number; runs: boolean; size: number }

function bestShape(v: Float64Array): Shape | undefined {
  const n = v.length;
  const x = new Float64Array(n);
  let best: Shape | undefined;
  for (let order = 0; order <= Math.min(2, n); order++) {
    if (!difference(v, order, x)) break;
    let seeds = 0;
    for (let i = 0; i < order; i++) seeds += svarintSize(x[i]);
    const packed = framesSize(x, order, n, false);
    if (packed >= 0 && (!best || seeds + 1 + packed < best.size)) best = { order, runs: false, size: seeds + 1 + packed };
    const count = runs(x, order, n);
    // runs pay only when values repeat; each run costs at least a length besides its value
    if (count > 0 && count <= (n - order) / 4) {
      const values = new Float64Array(count);
      const lengths = new Float64Array(count);
      runs(x, order, n, values, lengths);
      const a = framesSize(values, 0, count, false);
      const b = framesSize(lengths, 0, count, false);
      const size = seeds + 1 + varintSize(count) + a + b;
      if (a >= 0 && b >= 0 && (!best || size < best.size)) best = { order, runs: true, size };
    }
  }
  return best;
}

/** Writes a sequence of integers: numbers (safe integers) or 64-bit bigints. Nothing at all for an empty one. */
export function encodeInts(w: ByteWriter, values: Float64Array | BigInt64Array): void {
  const n = values.length;
  if (n === 0) return;
  let v: Float64Array;
  if (values instanceof BigInt64Array) {
    v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const b = values[i];
      if (b > MAX_SAFE_BIG || b < -MAX_SAFE_BIG) return encodeWide(w, values);
      v[i] = Number(b);
    }
  } else {
    v = values;
    for (let i = 0; i < n; i++) {
      if (!Number.isSafeInteger(v[i])) throw new RangeError(`not an integer within ±(2^53 - 1): ${v[i]}`);
    }
  }
  const shape = bestShape(v);
  if (!shape) return encodeWide(w, BigInt64Array.from(v, BigInt));
  const x = new Float64Array(n);
  difference(v, shape.order, x);
  w.byte(shape.order | (shape.runs ? RUNS : 0));
  for (let i = 0; i < shape.order; i++) w.svarint(x[i]);
  if (!shape.runs) {
    writeFrames(w, x, shape.order, n);
    return;
  }
  const count = runs(x, shape.order, n);
  const runValues = new Float64Array(count);
  const lengths = new Float64Array(count);
  runs(x, shape.order, n, runValues, lengths);
  w.varint(count);
  writeFrames(w, runValues, 0, count);
  writeFrames(w, lengths, 0, count);
}

/**
 * Reads n integers: a Float64Array when every one is within ±(2^53 - 1), else a BigInt64Array.
 * `wide`: whether the wide form may occur here (not inside the wide form itself: no nesting without bound).
 */
export function decodeInts(r: ByteReader, n: number, wide = true): Float64Array | BigInt64Array {
  return decodeScaled(r, n, 1, wide);
}

/** decodeInts(), with each value divided by `divisor` when it is a Float64Array (the decimals of floats.ts). */
export function decodeScaled(r: ByteReader, n: number, divisor: number, wide = true): Float64Array | BigInt64Array {
  if (n === 0) return new Float64Array(0);
  const mode = r.byte();
  const order = mode & 3;
  if (mode & ~(3 | RUNS | WIDE) || order > 2 || order > n || (mode & WIDE && (!wide || mode & RUNS || order > 1))) {
    throw new BlockFormatError(`integer mode ${mode}`);
  }
  if (mode & WIDE) {
    const v = decodeWide(r, n, order);
    if (v instanceof Float64Array && divisor !== 1) integrate(v, 0, divisor);
    return v;
  }
  const out = new Float64Array(n);
  for (let i = 0; i < order; i++) out[i] = r.svarint();
  if (mode & RUNS) readRuns(r, out, order);
  else if (order === 0) {
    // nothing to undo but the frames' own differences: they divide on the way
    readFrames(r, out, 0, n, divisor);
    return out;
  } else readFrames(r, out, order, n);
  integrate(out, order, divisor);
  return out;
}

/** Undoes the differencing in place, and divides by `divisor` on the way (the scale of decimal floats). */
function integrate(out: Float64Array, order: number, divisor: number): void {
  const n = out.length;
  // running values in locals: each step waits on one addition, not on the store before it
  if (order === 2) {
    let value = out[0];
    let d = out[1];
    out[0] = value / divisor;
    for (let i = 1; i < n; i++) {
      if (i > 1) d += out[i];
      value += d;
      out[i] = value / divisor;
    }
  } else if (order === 1) {
    let value = 0;
    for (let i = 0; i < n; i++) {
      value += out[i];
      out[i] = value / divisor;
    }
  } else if (divisor !== 1) {
    for (let i = 0; i < n; i++) out[i] /= divisor;
  }
}

/** Reads n integers that must all be within ±(2^53 - 1). */
export function decodeSafeInts(r: ByteReader, n: number): Float64Array {
  const v = decodeInts(r, n);
  if (v instanceof BigInt64Array) throw new BlockFormatError('integer out of range');
  return v;
}

function readRuns(r: ByteReader, out: Float64Array, from: number): void {
  const m = out.length - from;
  const count = r.count(m);
  if (count === 0 && m > 0) throw new BlockFormatError('no runs');
  const values = new Float64Array(count);
  const lengths = new Float64Array(count);
  readFrames(r, values, 0, count);
  readFrames(r, lengths, 0, count);
  let at = from;
  for (let j = 0; j < count; j++) {
    const length = lengths[j] + 1;
    if (!(length >= 1 && length <= out.length - at)) throw new BlockFormatError('runs overflow');
    // runs are often short: a loop costs less than a call of fill() each
    const value = values[j];
    for (const end = at + length; at < end; at++) out[at] = value;
  }
  if (at !== out.length) throw new BlockFormatError('runs fall short');
}

const MAX_SAFE_BIG = BigInt(MAX_SAFE);
const TWO32 = 0x100000000;

/**
 * The wide form: zig-zag of the 64-bit values or of their differences, as two 32-bit halves. Wrap-around comes from
 * storing into 64-bit typed arrays (which also keeps Node 20's optimizer off a BigInt.asIntN path it crashes on).
 */
function encodeWide(w: ByteWriter, v: BigInt64Array): void {
  const n = v.length;
  let best: Uint8Array | undefined;
  let bestOrder = 0;
  const x = new BigInt64Array(n);
  const z = new BigUint64Array(n);
  for (let order = 0; order <= 1; order++) {
    if (order === 0) x.set(v);
    else for (let i = n - 1; i >= 1; i--) x[i] = v[i] - v[i - 1];
    for (let i = 0; i < n; i++) z[i] = (x[i] << 1n) ^ (x[i] >> 63n);
    const hi = Float64Array.from(z, (h) => Number(h >> 32n));
    const lo = Float64Array.from(z, (l) => Number(l & 0xffffffffn));
    const part = new ByteWriter();
    encodeInts(part, hi);
    encodeInts(part, lo);
    const bytes = part.finish();
    if (!best || bytes.length < best.length) {
      best = bytes;
      bestOrder = order;
    }
  }
  w.byte(WIDE | bestOrder);
  w.bytes(best!);
}

function decodeWide(r: ByteReader, n: number, order: number): Float64Array | BigInt64Array {
  const hi = decodeInts(r, n, false) as Float64Array;
  const lo = decodeInts(r, n, false) as Float64Array;
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    if (!(hi[i] >= 0 && hi[i] < TWO32 && lo[i] >= 0 && lo[i] < TWO32)) throw new BlockFormatError('wide integer halves');
    const z = (BigInt(hi[i]) << 32n) | BigInt(lo[i]);
    out[i] = (z >> 1n) ^ -(z & 1n);
  }
  if (order === 1) for (let i = 1; i < n; i++) out[i] += out[i - 1];
  for (let i = 0; i < n; i++) {
    if (out[i] > MAX_SAFE_BIG || out[i] < -MAX_SAFE_BIG) return out;
  }
  return Float64Array.from(out, Number);
}
