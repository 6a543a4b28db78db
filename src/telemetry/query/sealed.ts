// The sealed windows' read logic both backends share (docs/api.md#telemetry-blocks): a block's points of some fields
// over a range, the head rows of a window merged over them (the later write winning field by field), and statistics
// from a block's own or from points. The backends only fetch: blocks and head rows.
import type { FieldInfo, SealedBlockEntry } from '../catalogue-types.ts';
import { flat } from '../../lib/flat-string.ts';
import { columnCells, type BlockData, type ColumnCells } from '../blocks/index.ts';
import { BOOLEAN, FLOAT, INT64_MAX, INT64_MIN, STRING } from '../line-protocol/line-scanner.ts';
import { IntegerOverflow, type Stats } from './stats.ts';
import type { SeriesPoints, WindowAcc } from './reads-types.ts';
import type { RowSink } from './row-bytes.ts';

/** A cell as the sealed readers carry it: integers exact (bigint beyond 2^53), booleans as booleans. */
export type SealedValue = number | bigint | string | boolean | null;

/** A series' points of some fields in a window: times ascending, one value array per field. */
export interface WindowPoints {
  ms: number[];
  sub: number[];
  values: SealedValue[][];
}

/** The first (or, `desc`, the last) `limit` points of a read. */
export interface EdgeTake {
  desc: boolean;
  limit: number;
}

/**
 * The block's points of `fields` over [fromMs, toMs) with at least one of the fields set, in time order; with `edge`,
 * only the first (or last) `limit` of them.
 */
export function pointsOfBlock(block: BlockData, fields: readonly FieldInfo[], fromMs: number, toMs: number, edge?: EdgeTake): WindowPoints {
  const cells = cellsOf(block, fields);
  const out: WindowPoints = { ms: [], sub: [], values: fields.map(() => []) };
  const row: SealedValue[] = new Array(cells.length);
  const begin = firstAtOrAfter(block.ms, fromMs);
  const end = firstAtOrAfter(block.ms, toMs);
  const desc = edge?.desc === true;
  const limit = edge?.limit ?? Number.POSITIVE_INFINITY;
  for (let k = 0; k < end - begin && out.ms.length < limit; k++) {
    const i = desc ? end - 1 - k : begin + k;
    let any = false;
    for (let f = 0; f < cells.length; f++) {
      row[f] = cells[f]?.value(i) ?? null;
      if (row[f] !== null) any = true;
    }
    if (!any) continue;
    out.ms.push(block.ms[i]);
    out.sub.push(block.sub[i]);
    for (let f = 0; f < cells.length; f++) out.values[f].push(row[f]);
  }
  if (desc) {
    out.ms.reverse();
    out.sub.reverse();
    for (const column of out.values) column.reverse();
  }
  return out;
}

/** The block's columns of `fields`, read by row (undefined: the field has no value in the block). */
function cellsOf(block: BlockData, fields: readonly FieldInfo[]): Array<ColumnCells | undefined> {
  return fields.map((f) => {
    const c = block.columns[f.ordinal];
    return c === undefined || c.kind !== f.kind ? undefined : columnCells(c, block.ms.length);
  });
}

/**
 * Appends the block's rows over [fromMs, toMs) with at least one of `fields` set as JSON rows, written from the
 * decoded columns, in the query's order (`desc`: newest first) until `rows` holds `limit`.
 */
export function appendBlockRowsJson(block: BlockData, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean, limit: number,
  rows: RowSink, timeJson: (ms: number, ns: number) => string): void {
  const cells = cellsOf(block, fields);
  const begin = firstAtOrAfter(block.ms, fromMs);
  const end = firstAtOrAfter(block.ms, toMs);
  for (let k = 0; k < end - begin && rows.length < limit; k++) {
    const i = desc ? end - 1 - k : begin + k;
    let values = '';
    let any = false;
    for (let f = 0; f < cells.length; f++) {
      const text = cells[f]?.json(i);
      if (text === undefined) values += ',null';
      else {
        values += `,${text}`;
        any = true;
      }
    }
    if (any) rows.push(flat(`[${timeJson(block.ms[i], block.sub[i])}${values}]`));
  }
}

/** A stored head value as a sealed cell: integers exact (bigint beyond 2^53), booleans from 0/1. */
export function headValue(field: FieldInfo, v: unknown): SealedValue {
  if (v === null || v === undefined) return null;
  if (field.kind === BOOLEAN) return v === 1n || v === 1;
  if (field.kind === FLOAT) return Number(v);
  if (field.kind === STRING) return v as string;
  const big = v as bigint;
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

/** Sealed points with later head points merged in (the head's values win field by field). */
export function mergePoints(sealed: WindowPoints, head: WindowPoints): WindowPoints {
  const out: WindowPoints = { ms: [], sub: [], values: sealed.values.map(() => []) };
  let i = 0;
  let j = 0;
  while (i < sealed.ms.length || j < head.ms.length) {
    const order = i >= sealed.ms.length ? 1 : j >= head.ms.length ? -1 : (sealed.ms[i] - head.ms[j]) || (sealed.sub[i] - head.sub[j]);
    if (order < 0) {
      out.ms.push(sealed.ms[i]); out.sub.push(sealed.sub[i]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(sealed.values[k][i]);
      i++;
    } else if (order > 0) {
      out.ms.push(head.ms[j]); out.sub.push(head.sub[j]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(head.values[k][j]);
      j++;
    } else {
      out.ms.push(head.ms[j]); out.sub.push(head.sub[j]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(head.values[k][j] ?? sealed.values[k][i]);
      i++;
      j++;
    }
  }
  return out;
}

/** count, sum, min and max of a numeric field from a block's own statistics (integers exact). */
export function statsOfBlock(block: SealedBlockEntry | null, field: FieldInfo): Stats {
  const s = block?.stats[field.ordinal];
  if (s === undefined || s.count === 0 || s.sum === undefined) return { count: 0, sum: 0, min: undefined, max: undefined };
  const exact = (v: number | bigint | undefined) => (field.kind === FLOAT || v === undefined ? v : BigInt(v));
  return { count: s.count, sum: exact(s.sum)!, min: exact(s.min), max: exact(s.max) };
}

/** Stats of one field's values in time order (nulls skipped): float sums in that order, integer sums exact. */
export function statsOfValues(field: FieldInfo, values: readonly SealedValue[]): Stats {
  let count = 0;
  let min: number | bigint | undefined;
  let max: number | bigint | undefined;
  if (field.kind === FLOAT) {
    let sum = 0;
    for (const v of values) {
      if (v === null) continue;
      const x = v as number;
      count++;
      sum += x;
      if (min === undefined || x < (min as number)) min = x;
      if (max === undefined || x > (max as number)) max = x;
    }
    return { count, sum, min, max };
  }
  let sum = 0n;
  for (const v of values) {
    if (v === null) continue;
    const x = typeof v === 'bigint' ? v : BigInt(v as number);
    count++;
    sum += x;
    if (min === undefined || x < (min as bigint)) min = x;
    if (max === undefined || x > (max as bigint)) max = x;
  }
  return { count, sum, min, max };
}

/** The index of the first time >= t in ascending times. */
export function firstAtOrAfter(times: Float64Array, t: number): number {
  let a = 0;
  let b = times.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (times[mid] < t) a = mid + 1;
    else b = mid;
  }
  return a;
}

/** Appends a sealed window's points (ascending) in the read's order (`desc`: newest first), at most `left`. */
export function appendPoints(out: SeriesPoints, points: WindowPoints, desc: boolean, left: number | undefined): void {
  const n = points.ms.length;
  const take = left === undefined ? n : Math.min(n, left);
  for (let k = 0; k < take; k++) {
    const i = desc ? n - 1 - k : k;
    out.ms.push(points.ms[i]);
    out.sub.push(points.sub[i]);
    for (let f = 0; f < out.values.length; f++) {
      const v = points.values[f][i];
      out.values[f].push(typeof v === 'bigint' ? Number(v) : v);
    }
  }
}

/** Appends a sealed window's points as JSON rows, in the query's order, up to the limit. */
export function appendRowsJson(points: WindowPoints, fields: readonly FieldInfo[], desc: boolean, limit: number, rows: RowSink, timeJson: (ms: number, ns: number) => string): void {
  const n = points.ms.length;
  for (let k = 0; k < n && rows.length < limit; k++) {
    const i = desc ? n - 1 - k : k;
    let row = `[${timeJson(points.ms[i], points.sub[i])}`;
    for (let f = 0; f < fields.length; f++) row += `,${sealedValueJson(points.values[f][i])}`;
    rows.push(flat(`${row}]`));
  }
}

/** A sealed cell as the head path's JSON writes it: integers with every digit, floats in their shortest exact form. */
export function sealedValueJson(v: SealedValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/** The interval a time falls in, of `intervalMs` from `firstMs` (0: one interval). */
export function windowOf(t: number, firstMs: number, intervalMs: number): number {
  return intervalMs === 0 ? 0 : Math.floor((t - firstMs) / intervalMs);
}

/** Adds one window's reduction into `acc`. */
export function addWindow(acc: WindowAcc, w: number, n: number, total: number | bigint, lo: number | bigint, hi: number | bigint): void {
  if (n === 0) return;
  if (acc.count !== undefined && acc.sum !== undefined) addSum(w, n, total, acc.count, acc.sum);
  if (acc.min !== undefined || acc.max !== undefined) {
    const low = exactNumber(lo);
    const high = exactNumber(hi);
    if (acc.min !== undefined && (acc.min[w] === undefined || low < acc.min[w]!)) acc.min[w] = low;
    if (acc.max !== undefined && (acc.max[w] === undefined || high > acc.max[w]!)) acc.max[w] = high;
  }
}

function exactNumber(v: number | bigint): number {
  if (typeof v === 'number') return v;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new IntegerOverflow();
  return n;
}

/** Adds a field's points (boxed, as merged windows carry them) into `acc` per interval. */
export function addPointWindows(points: WindowPoints, field: FieldInfo, firstMs: number, intervalMs: number, acc: WindowAcc): void {
  const values = points.values[0];
  const float = field.kind === FLOAT;
  let w = -1;
  let n = 0;
  let total: number | bigint = 0;
  let lo: number | bigint = 0;
  let hi: number | bigint = 0;
  for (let i = 0; i < points.ms.length; i++) {
    const v = values[i];
    if (v === null) continue;
    const wi = windowOf(points.ms[i], firstMs, intervalMs);
    const x = float ? (v as number) : BigInt(v as number | bigint);
    if (wi !== w) {
      addWindow(acc, w, n, total, lo, hi);
      w = wi;
      n = 0;
      total = float ? 0 : 0n;
      lo = x;
      hi = x;
    }
    n++;
    total = float ? (total as number) + (x as number) : (total as bigint) + (x as bigint);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  addWindow(acc, w, n, total, lo, hi);
}

const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Adds a block's values of a numeric field over [fromMs, toMs) into `acc` per interval, from the decoded column as it
 * is (no value boxed). False, with nothing added, when the column holds integers beyond 2^53 or an integer sum
 * leaves the range where numbers add exactly: the caller reduces the points then.
 */
export function addBlockWindows(block: BlockData, field: FieldInfo, fromMs: number, toMs: number, firstMs: number, intervalMs: number,
  acc: WindowAcc): boolean {
  const c = block.columns[field.ordinal];
  if (c === undefined || c.kind !== field.kind) return true;
  if (!(c.values instanceof Float64Array)) return false;
  const values = c.values;
  const present = c.present;
  const ms = block.ms;
  const n = ms.length;
  const exactSums = field.kind !== FLOAT && acc.sum !== undefined;
  let i = firstAtOrAfter(ms, fromMs);
  let j = i;
  if (present !== undefined) {
    j = 0;
    for (let r = 0; r < i; r++) if (present[r] !== 0) j++;
  }
  // windows are gathered first: an inexact integer sum found late must leave `acc` untouched
  const found: number[] = [];
  let w = 0;
  let end = -Infinity;
  let count = 0;
  let total = 0;
  let lo = 0;
  let hi = 0;
  for (; i < n; i++) {
    const t = ms[i];
    if (t >= toMs) break;
    if (present !== undefined && present[i] === 0) continue;
    const v = values[j++];
    if (t >= end) {
      if (count > 0) found.push(w, count, total, lo, hi);
      w = windowOf(t, firstMs, intervalMs);
      end = intervalMs === 0 ? Infinity : firstMs + (w + 1) * intervalMs;
      count = 0;
      total = 0;
      lo = v;
      hi = v;
    }
    count++;
    total += v;
    if (exactSums && (total > SAFE || total < -SAFE)) return false;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (count > 0) found.push(w, count, total, lo, hi);
  for (let k = 0; k < found.length; k += 5) {
    const sum = exactSums ? BigInt(found[k + 2]) : found[k + 2];
    addWindow(acc, found[k], found[k + 1], sum, found[k + 3], found[k + 4]);
  }
  return true;
}

export function addSum(w: number, n: number, total: number | bigint, count: number[], sum: number[]): void {
  if (typeof total === 'bigint' && (total > INT64_MAX || total < INT64_MIN)) throw new IntegerOverflow();
  count[w] = (count[w] ?? 0) + n;
  sum[w] = (sum[w] ?? 0) + Number(total);
}
