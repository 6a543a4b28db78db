// Statistics of one field in one block: count, sum, min, max, and the first and last values with their times, so an
// aggregate over whole blocks reads these and decodes nothing. Stored beside the block and read far more often, so
// they are compact: numbers as short decimals or safe integers where they are, times of the last row relative to
// the first.
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED, type FieldKind } from '../line-scanner.ts';
import { ByteReader, ByteWriter } from './bits.ts';
import type { Column } from './column.ts';
import { MAX_DECIMAL_EXPONENT, decimalOf, fromDecimal } from './floats.ts';
import { decodeStrings, encodeStrings } from './strings.ts';
import { BlockFormatError } from './errors.ts';

/** Per block and field. Times of first and last are the rows' (ms, sub). */
export interface FieldStats {
  count: number;
  /** floats: the sum in row order (double); integers: exact (bigint, may exceed int64); absent for string/boolean */
  sum?: number | bigint;
  /** floats: number; integers: number when safe else bigint; absent for string/boolean */
  min?: number | bigint;
  max?: number | bigint;
  first: number | bigint | string | boolean;
  firstMs: number;
  firstSub: number;
  last: number | bigint | string | boolean;
  lastMs: number;
  lastSub: number;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_SAFE_BIG = BigInt(MAX_SAFE);
const safeOrBig = (b: bigint): number | bigint => (b <= MAX_SAFE_BIG && b >= -MAX_SAFE_BIG ? Number(b) : b);

/** The statistics of a column with at least one value, its rows at times (ms, sub). */
export function columnStats(ms: Float64Array, sub: Int32Array, column: Column): FieldStats {
  const { kind, present, values } = column;
  const count = values.length;
  if (count === 0) throw new RangeError('statistics of a column without values');
  let firstRow = 0;
  let lastRow = ms.length - 1;
  if (present) {
    firstRow = present.indexOf(1);
    lastRow = present.lastIndexOf(1);
  }
  const times = { firstMs: ms[firstRow], firstSub: sub[firstRow], lastMs: ms[lastRow], lastSub: sub[lastRow] };
  if (kind === STRING || kind === BOOLEAN) {
    const at = (k: number) => (kind === BOOLEAN ? values[k] !== 0 : values[k] as string);
    return { count, first: at(0), last: at(count - 1), ...times };
  }
  if (values instanceof BigInt64Array) {
    let sum = 0n;
    let min = values[0];
    let max = min;
    for (const v of values) {
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return { count, sum, min: safeOrBig(min), max: safeOrBig(max), first: safeOrBig(values[0]), last: safeOrBig(values[count - 1]), ...times };
  }
  const v = values as Float64Array;
  let sum = 0;
  let min = v[0];
  let max = min;
  // integer sums are exact while every partial sum stays within 2^53; beyond, they are summed again as bigints
  let exact = true;
  for (let i = 0; i < count; i++) {
    sum += v[i];
    if (v[i] < min) min = v[i];
    if (v[i] > max) max = v[i];
    if (!(sum <= MAX_SAFE && sum >= -MAX_SAFE)) exact = false;
  }
  const int = kind === INTEGER || kind === UNSIGNED;
  const total = !int ? sum : exact ? BigInt(sum) : v.reduce((s, x) => s + BigInt(x), 0n);
  return { count, sum: total, min, max, first: v[0], last: v[count - 1], ...times };
}

const STATS_VERSION = 1;
/** flags: the kind + 1 in the low three bits (0: no statistics), then these */
const LAST_RELATIVE = 8;
const SUBS = 16;
/** tags of a number: 0..18 a decimal (svarint / 10^tag), then these */
const RAW = 255;
const BIG = 254;

function writeNumber(w: ByteWriter, v: number | bigint): void {
  if (typeof v === 'bigint') {
    if (v <= MAX_SAFE_BIG && v >= -MAX_SAFE_BIG) return writeNumber(w, Number(v));
    w.byte(BIG);
    w.byte(v < 0n ? 1 : 0);
    const bytes: number[] = [];
    for (let m = v < 0n ? -v : v; m > 0n; m >>= 8n) bytes.push(Number(m & 255n));
    w.varint(bytes.length);
    w.bytes(Uint8Array.from(bytes));
    return;
  }
  const decimal = decimalOf(v);
  if (decimal) {
    w.byte(decimal[1]);
    w.svarint(decimal[0]);
    return;
  }
  w.byte(RAW);
  const raw = new Uint8Array(8);
  new DataView(raw.buffer).setFloat64(0, v, true);
  w.bytes(raw);
}

function readNumber(r: ByteReader): number | bigint {
  const tag = r.byte();
  if (tag <= MAX_DECIMAL_EXPONENT) return fromDecimal(r.svarint(), tag);
  if (tag === RAW) {
    const raw = r.take(8);
    return new DataView(raw.buffer, raw.byteOffset, 8).getFloat64(0, true);
  }
  if (tag !== BIG) throw new BlockFormatError(`number tag ${tag}`);
  const negative = r.byte();
  if (negative > 1) throw new BlockFormatError('sign');
  const bytes = r.take(r.count(32));
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  return negative ? -v : v;
}

/** An integer statistic read back: number when safe, else bigint */
function readInteger(r: ByteReader): number | bigint {
  const v = readNumber(r);
  if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new BlockFormatError('integer statistic');
  return typeof v === 'bigint' ? safeOrBig(v) : v;
}

/** by ordinal, as columns */
export function encodeStats(stats: Array<FieldStats | undefined>): Uint8Array {
  const w = new ByteWriter(64);
  w.byte(STATS_VERSION);
  w.varint(stats.length);
  for (const s of stats) {
    if (!s) {
      w.byte(0);
      continue;
    }
    const kind = kindOf(s);
    const delta = s.lastMs - s.firstMs;
    const relative = delta >= 0 && Number.isSafeInteger(delta) && s.firstMs + delta === s.lastMs;
    const subs = s.firstSub !== 0 || s.lastSub !== 0;
    w.byte((kind + 1) | (relative ? LAST_RELATIVE : 0) | (subs ? SUBS : 0));
    w.varint(s.count);
    w.svarint(s.firstMs);
    if (relative) w.varint(delta);
    else w.svarint(s.lastMs);
    if (subs) {
      w.varint(s.firstSub);
      w.varint(s.lastSub);
    }
    if (kind === STRING) encodeStrings(w, [s.first as string, s.last as string]);
    else if (kind === BOOLEAN) w.byte((s.first ? 1 : 0) | (s.last ? 2 : 0));
    else for (const v of [s.sum!, s.min!, s.max!, s.first as number | bigint, s.last as number | bigint]) writeNumber(w, kind === INTEGER ? integerOf(v) : v);
  }
  return w.finish();
}

/** An integer statistic, exactly: integral numbers beyond 2^53 as the bigint they are */
function integerOf(v: number | bigint): number | bigint {
  if (typeof v === 'bigint' || Number.isSafeInteger(v)) return v;
  if (!Number.isInteger(v)) throw new RangeError(`an integer statistic of ${v}`);
  return BigInt(v);
}

/** The kind statistics stand for: strings and booleans by their values, integers by an exact (bigint) sum. */
function kindOf(s: FieldStats): FieldKind {
  if (typeof s.first === 'string') return STRING;
  if (typeof s.first === 'boolean') return BOOLEAN;
  return typeof s.sum === 'bigint' ? INTEGER : FLOAT;
}

export function decodeStats(bytes: Uint8Array): Array<FieldStats | undefined> {
  const r = new ByteReader(bytes);
  const version = r.byte();
  if (version !== STATS_VERSION) throw new BlockFormatError(`statistics version ${version}`);
  const out: Array<FieldStats | undefined> = new Array(r.count(r.left)).fill(undefined);
  for (let k = 0; k < out.length; k++) {
    const flags = r.byte();
    if (flags === 0) continue;
    const kind = (flags & 7) - 1;
    if (kind < 0 || kind > BOOLEAN || kind === UNSIGNED || flags & ~(7 | LAST_RELATIVE | SUBS)) throw new BlockFormatError(`statistics flags ${flags}`);
    const count = r.varint();
    const firstMs = r.svarint();
    const lastMs = flags & LAST_RELATIVE ? firstMs + r.varint() : r.svarint();
    const firstSub = flags & SUBS ? r.count(999_999) : 0;
    const lastSub = flags & SUBS ? r.count(999_999) : 0;
    const times = { firstMs, firstSub, lastMs, lastSub };
    if (kind === STRING) {
      const [first, last] = decodeStrings(r, 2);
      out[k] = { count, first, last, ...times };
    } else if (kind === BOOLEAN) {
      const b = r.byte();
      if (b > 3) throw new BlockFormatError('boolean statistics');
      out[k] = { count, first: (b & 1) === 1, last: (b & 2) === 2, ...times };
    } else {
      const read = kind === INTEGER ? () => readInteger(r) : () => Number(readNumber(r));
      const [sum, min, max, first, last] = [read(), read(), read(), read(), read()];
      out[k] = { count, sum: kind === INTEGER ? BigInt(sum) : sum, min, max, first, last, ...times };
    }
  }
  r.done();
  return out;
}
