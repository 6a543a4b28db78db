// Float columns, decimal-aware in the spirit of ALP (Afroozeh et al., SIGMOD 2024): meter values are short decimals
// (1234.5 W), so find an exponent e for which d = round(v * 10^e) gives v back as d / 10^e, and code the integers d
// as a sequence (integers.ts: deltas, frame of reference, bit packing). Values that do not come back exactly are
// exceptions, stored raw beside their positions, and their d repeats the previous one so that the deltas stay small.
// Columns that are not short decimals go to XOR coding (gorilla.ts) instead.
//
// Decoding divides: d and 10^e (e <= 18) are exact doubles, so d / 10^e is the double nearest the decimal, which is
// what parsing its text gave. The encoder checks every value with that same division, so what it keeps is exact to
// the bit; -0, NaN and infinities are exceptions.
import { ByteReader, ByteWriter, HI, LO, wordsOf } from './bits.ts';
import { decodeSafeInts, decodeScaled, encodeInts } from './integers.ts';
import { decodeXor, encodeXor } from './gorilla.ts';
import { BlockFormatError } from './errors.ts';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_EXPONENT = 18;
/** 10^e, exact: parsed from text */
const POW10 = Float64Array.from({ length: MAX_EXPONENT + 1 }, (_, e) => Number(`1e${e}`));
const SAMPLE = 64;
const ALP = 0;
const XOR = 1;

/** Whether v comes back from round(v * 10^e) / 10^e, -0 excepted. */
function fits(v: number, p: number): boolean {
  const d = Math.round(v * p);
  return Math.abs(d) <= MAX_SAFE && d / p === v && !(v === 0 && 1 / v < 0);
}

/** [d, e] with the smallest e such that v = d / 10^e exactly, or undefined (the compact numbers of stats.ts). */
export function decimalOf(v: number): [number, number] | undefined {
  for (let e = 0; e <= MAX_EXPONENT; e++) if (fits(v, POW10[e])) return [Math.round(v * POW10[e]), e];
  return undefined;
}

/** d / 10^e: the value of what decimalOf() found */
export const fromDecimal = (d: number, e: number): number => d / POW10[e];

export const MAX_DECIMAL_EXPONENT = MAX_EXPONENT;

/** The smallest exponent that fits most of the values; -1 when even the best fits under half. */
function chooseExponent(sample: ArrayLike<number>): number {
  let best = -1;
  let bestFits = 0;
  for (let e = 0; e <= MAX_EXPONENT; e++) {
    let count = 0;
    for (let i = 0; i < sample.length; i++) if (fits(sample[i], POW10[e])) count++;
    if (count > bestFits) {
      best = e;
      bestFits = count;
      if (count === sample.length) break;
    }
  }
  return bestFits * 2 >= sample.length ? best : -1;
}

/** Up to SAMPLE values spread evenly over the column, plus `extra`. */
function sampleOf(values: Float64Array, extra: readonly number[] = []): number[] {
  const n = values.length;
  const step = Math.max(1, n / SAMPLE);
  const out: number[] = [];
  for (let i = 0; i < n; i += step) out.push(values[Math.floor(i)]);
  return out.concat(extra);
}

interface Alp { bytes: Uint8Array; exceptions: number[] }

function encodeAlp(values: Float64Array, e: number): Alp {
  const n = values.length;
  const p = POW10[e];
  const d = new Float64Array(n);
  const exceptions: number[] = [];
  let prev = 0;
  for (let i = 0; i < n; i++) {
    if (fits(values[i], p)) {
      prev = Math.round(values[i] * p);
      break;
    }
  }
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (fits(v, p)) prev = Math.round(v * p);
    else exceptions.push(i);
    d[i] = prev;
  }
  const w = new ByteWriter(n + 16);
  w.byte(ALP);
  w.byte(e);
  encodeInts(w, d);
  w.varint(exceptions.length);
  if (exceptions.length > 0) {
    encodeInts(w, Float64Array.from(exceptions));
    const words = wordsOf(values);
    for (const i of exceptions) {
      w.u32(words[2 * i + LO]);
      w.u32(words[2 * i + HI]);
    }
  }
  return { bytes: w.finish(), exceptions };
}

function encodeXorBytes(values: Float64Array): Uint8Array {
  const w = new ByteWriter(values.length * 2 + 16);
  w.byte(XOR);
  encodeXor(w, values);
  return w.finish();
}

/** Writes a column of doubles; every bit pattern comes back. Nothing at all for an empty column. */
export function encodeFloats(w: ByteWriter, values: Float64Array): void {
  const n = values.length;
  if (n === 0) return;
  const e = chooseExponent(sampleOf(values));
  if (e < 0) {
    w.bytes(encodeXorBytes(values));
    return;
  }
  let best = encodeAlp(values, e);
  if (best.exceptions.length > 0) {
    // the sample may have missed what the exceptions need (a column of zeros by night and decimals by day)
    const again = chooseExponent(sampleOf(values, best.exceptions.slice(0, SAMPLE).map((i) => values[i])));
    if (again >= 0 && again !== e) {
      const other = encodeAlp(values, again);
      if (other.bytes.length < best.bytes.length) best = other;
    }
  }
  if (best.exceptions.length * 8 > n) {
    const xor = encodeXorBytes(values);
    if (xor.length < best.bytes.length) {
      w.bytes(xor);
      return;
    }
  }
  w.bytes(best.bytes);
}

export function decodeFloats(r: ByteReader, n: number): Float64Array {
  if (n === 0) return new Float64Array(0);
  const mode = r.byte();
  if (mode === XOR) return decodeXor(r, n);
  if (mode !== ALP) throw new BlockFormatError(`float mode ${mode}`);
  const e = r.byte();
  if (e > MAX_EXPONENT) throw new BlockFormatError(`decimal exponent ${e}`);
  const out = decodeScaled(r, n, POW10[e]);
  if (out instanceof BigInt64Array) throw new BlockFormatError('decimal out of range');
  const count = r.count(n);
  if (count > 0) {
    const at = decodeSafeInts(r, count);
    const words = wordsOf(out);
    for (let k = 0; k < count; k++) {
      const i = at[k];
      if (!(i >= 0 && i < n)) throw new BlockFormatError('exception position out of range');
      words[2 * i + LO] = r.u32();
      words[2 * i + HI] = r.u32();
    }
  }
  return out;
}
