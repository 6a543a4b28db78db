// Blocks from the rows of a shard table, and a block with later points merged in: what sealing does on either backend
// (sqlite/seal.ts, pg/pg-seal.ts), pure.
import { BOOLEAN, FLOAT, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import { encodeBlock, type BlockData } from './block.ts';
import type { Column } from './column.ts';
import { columnStats, encodeStats, type FieldStats } from './stats.ts';
import { columnFromValues, valuesOfColumn } from './values.ts';

/** A window may be sealed once this share of its duration has passed after its end (an hour for a 1-day window). */
export const GRACE_DIVISOR = 24;

/** One sealing transaction's work. */
export interface SealStep {
  namespaceId: number;
  window: number;
  table: string;
  /** series sealed by this step, and their points (head rows) */
  series: number;
  points: number;
  /** bytes of the blocks written */
  bytes: number;
  /** the window's shard table is gone: every point of the window is in its blocks */
  done: boolean;
}

/** Shard-table rows (series_id, t_ms, t_ns, c0 .. c<width - 1>, integers as bigint) of one series as a block. */
export function blockFromRows(rows: readonly unknown[][], width: number, kinds: ReadonlyArray<FieldKind | undefined>): BlockData {
  const n = rows.length;
  const ms = new Float64Array(n);
  const sub = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    ms[i] = Number(rows[i][1] as bigint);
    sub[i] = Number(rows[i][2] as bigint);
  }
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < width; c++) {
    const kind = kinds[c];
    if (kind === undefined) continue;
    columns[c] = columnFromValues(kind, rows.map((r) => cellValue(r[3 + c], kind)));
  }
  return { ms, sub, columns };
}

/** A stored cell as the value of its field's kind (integers stay bigint; booleans are stored 0/1). */
function cellValue(v: unknown, kind: FieldKind): number | bigint | string | boolean | null {
  if (v === null || v === undefined) return null;
  if (kind === BOOLEAN) return v === 1n || v === 1;
  if (kind === FLOAT) return typeof v === 'bigint' ? Number(v) : v as number;
  if (kind === STRING) return v as string;
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

/**
 * A block with later points merged in: at a time both hold, `later`'s values replace `earlier`'s field by field (a
 * field `later` lacks keeps its value), as InfluxDB does for a point written twice. Points that all come after
 * `earlier`'s last (history arriving in order) are appended column by column, without a value per row made up.
 */
export function mergeBlocks(earlier: BlockData, later: BlockData): BlockData {
  const a = earlier.ms.length;
  if (a === 0) return later;
  if (later.ms.length === 0) return earlier;
  const after = (later.ms[0] - earlier.ms[a - 1] || later.sub[0] - earlier.sub[a - 1]) > 0;
  return (after ? appendBlock(earlier, later) : mergeNumbers(earlier, later)) ?? mergeBlocksByRow(earlier, later);
}

/**
 * mergeBlocks for blocks of numbers and booleans (two clients' writes that interleave in time), straight from their
 * typed columns; undefined where a column holds strings or integers beyond 2^53, or a field changed kind.
 */
function mergeNumbers(earlier: BlockData, later: BlockData): BlockData | undefined {
  const a = earlier.ms.length;
  const b = later.ms.length;
  for (const cs of [earlier.columns, later.columns]) {
    if (cs.some((c) => c !== undefined && (Array.isArray(c.values) || c.values instanceof BigInt64Array))) return undefined;
  }
  // each merged row's row in earlier and in later (-1: none)
  const fromA = new Int32Array(a + b);
  const fromB = new Int32Array(a + b);
  const ms = new Float64Array(a + b);
  const sub = new Int32Array(a + b);
  let n = 0;
  for (let i = 0, j = 0; i < a || j < b; n++) {
    const order = i >= a ? 1 : j >= b ? -1 : (earlier.ms[i] - later.ms[j]) || (earlier.sub[i] - later.sub[j]);
    fromA[n] = order <= 0 ? i++ : -1;
    fromB[n] = order >= 0 ? j++ : -1;
    ms[n] = order <= 0 ? earlier.ms[fromA[n]] : later.ms[fromB[n]];
    sub[n] = order <= 0 ? earlier.sub[fromA[n]] : later.sub[fromB[n]];
  }
  const columns = pairColumns(earlier, later, (ca, cb, kind) => {
    const ia = valueIndex(ca, a);
    const ib = valueIndex(cb, b);
    const values = kind === BOOLEAN ? new Uint8Array(n) : new Float64Array(n);
    const present = new Uint8Array(n);
    let k = 0;
    for (let r = 0; r < n; r++) {
      const vb = fromB[r] < 0 ? -1 : ib[fromB[r]];
      const va = vb >= 0 || fromA[r] < 0 ? -1 : ia[fromA[r]];
      if (vb >= 0) values[k++] = cb!.values[vb] as number;
      else if (va >= 0) values[k++] = ca!.values[va] as number;
      else continue;
      present[r] = 1;
    }
    return k === 0 ? undefined : { kind, present: k < n ? present : undefined, values: values.slice(0, k) };
  });
  return columns === undefined ? undefined : { ms: ms.slice(0, n), sub: sub.slice(0, n), columns };
}

/**
 * The columns of two blocks of a series paired field by field, each pair made one by `merge` (with the field's kind);
 * undefined where a field has another kind in each.
 */
function pairColumns(earlier: BlockData, later: BlockData,
  merge: (ca: Column | undefined, cb: Column | undefined, kind: FieldKind) => Column | undefined): Array<Column | undefined> | undefined {
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < Math.max(earlier.columns.length, later.columns.length); c++) {
    const ca = earlier.columns[c];
    const cb = later.columns[c];
    if (ca === undefined && cb === undefined) continue;
    if (ca !== undefined && cb !== undefined && ca.kind !== cb.kind) return undefined;
    columns[c] = merge(ca, cb, (cb ?? ca)!.kind);
  }
  return columns;
}

/** For each row, the index of its value in the column's values (-1: none; every row -1 without a column). */
function valueIndex(column: Column | undefined, rows: number): Int32Array {
  const index = new Int32Array(rows);
  if (column === undefined) return index.fill(-1);
  for (let i = 0, k = 0; i < rows; i++) index[i] = column.present === undefined || column.present[i] !== 0 ? k++ : -1;
  return index;
}

/** `later` appended to `earlier` (every row of it after theirs); undefined where a field changed kind between them. */
function appendBlock(earlier: BlockData, later: BlockData): BlockData | undefined {
  const a = earlier.ms.length;
  const b = later.ms.length;
  const ms = new Float64Array(a + b);
  ms.set(earlier.ms);
  ms.set(later.ms, a);
  const sub = new Int32Array(a + b);
  sub.set(earlier.sub);
  sub.set(later.sub, a);
  const columns = pairColumns(earlier, later, (ca, cb, kind) => ({
    kind,
    present: presenceOf(ca, a, cb, b),
    values: ca === undefined ? cb!.values : cb === undefined ? ca.values : joinValues(ca.values, cb.values),
  }));
  return columns === undefined ? undefined : { ms, sub, columns };
}

/** The presence of two columns one after the other (undefined: every row has a value). */
function presenceOf(ca: Column | undefined, a: number, cb: Column | undefined, b: number): Uint8Array | undefined {
  if (ca !== undefined && cb !== undefined && ca.present === undefined && cb.present === undefined) return undefined;
  const present = new Uint8Array(a + b);
  if (ca !== undefined) present.set(ca.present ?? new Uint8Array(a).fill(1));
  if (cb !== undefined) present.set(cb.present ?? new Uint8Array(b).fill(1), a);
  return present;
}

/** Two columns' values one after the other, in the array type their kind takes for all of them. */
function joinValues(x: Column['values'], y: Column['values']): Column['values'] {
  if (Array.isArray(x) || Array.isArray(y)) return [...x as string[], ...y as string[]];
  if (x instanceof BigInt64Array || y instanceof BigInt64Array) {
    const out = new BigInt64Array(x.length + y.length);
    for (let i = 0; i < x.length; i++) out[i] = BigInt(x[i]);
    for (let i = 0; i < y.length; i++) out[x.length + i] = BigInt(y[i]);
    return out;
  }
  const out = new (x.constructor as Float64ArrayConstructor)(x.length + y.length);
  out.set(x as Float64Array);
  out.set(y as Float64Array, x.length);
  return out;
}

/** mergeBlocks row by row: what any two blocks need, and what appending must equal. */
export function mergeBlocksByRow(earlier: BlockData, later: BlockData): BlockData {
  const a = earlier.ms.length;
  const b = later.ms.length;
  const ms: number[] = [];
  const sub: number[] = [];
  // for each merged row: its row in earlier and in later (-1: none)
  const fromA: number[] = [];
  const fromB: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a || j < b) {
    const order = i >= a ? 1 : j >= b ? -1 : (earlier.ms[i] - later.ms[j]) || (earlier.sub[i] - later.sub[j]);
    if (order < 0) {
      ms.push(earlier.ms[i]); sub.push(earlier.sub[i]); fromA.push(i++); fromB.push(-1);
    } else if (order > 0) {
      ms.push(later.ms[j]); sub.push(later.sub[j]); fromA.push(-1); fromB.push(j++);
    } else {
      ms.push(earlier.ms[i]); sub.push(earlier.sub[i]); fromA.push(i++); fromB.push(j++);
    }
  }
  const width = Math.max(earlier.columns.length, later.columns.length);
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < width; c++) {
    const ca = earlier.columns[c];
    const cb = later.columns[c];
    if (ca === undefined && cb === undefined) continue;
    const kind = (cb ?? ca)!.kind;
    const va = ca === undefined ? undefined : valuesOfColumn(ca, a);
    const vb = cb === undefined ? undefined : valuesOfColumn(cb, b);
    const values = ms.map((_, r) => {
      const fromLater = fromB[r] >= 0 && vb !== undefined ? vb[fromB[r]] : null;
      if (fromLater !== null) return fromLater;
      return fromA[r] >= 0 && va !== undefined ? va[fromA[r]] : null;
    });
    columns[c] = columnFromValues(kind, values);
  }
  return { ms: Float64Array.from(ms), sub: Int32Array.from(sub), columns };
}

/** A block as stored: its rows, first and last time, encoded statistics and encoded data. */
export function blockRow(block: BlockData): { rows: number; firstMs: number; lastMs: number; stats: Uint8Array; data: Uint8Array } {
  const n = block.ms.length;
  const stats: Array<FieldStats | undefined> = block.columns.map((c) => (c === undefined ? undefined : columnStats(block.ms, block.sub, c)));
  return { rows: n, firstMs: block.ms[0], lastMs: block.ms[n - 1], stats: encodeStats(stats), data: encodeBlock(block) };
}
