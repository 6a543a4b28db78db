// Blocks made straight from staged row groups, without a shard table between: what both backends do with staged
// points of a window already due for sealing (sqlite/seal-staged.ts, pg/pg-seal-staged.ts), pure.
//
// A row group is rows of one shard table as cells: (series_id, t_ms, t_ns, c0 .. c<width - 1>) row after row in a
// Float64Array, NaN where a cell holds NULL, a string or an integer beyond 2^53 (those in `others`, by cell index).
import { BOOLEAN, FLOAT, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import type { BlockData } from './block.ts';
import type { Column } from './column.ts';
import { blockFromRows } from './rows.ts';

/** A group of rows bound for one shard table with one set of value columns. */
export interface RowGroup {
  table: string;
  width: number;
  /** one character per value column: 'i' where it holds integers, another otherwise */
  kinds: string;
  rows: number;
  numbers: Float64Array;
  /** strings and big integers by cell index (their cell is NaN) */
  others: ReadonlyMap<number, string | bigint> | undefined;
}

/** The rows of `groups` by series, in the groups' order and each group's row order (later rows are later writes). */
export function rowsBySeries(groups: Iterable<RowGroup>): Map<number, SeriesRows> {
  const bySeries = new Map<number, SeriesRows>();
  for (const group of groups) {
    const perRow = 3 + group.width;
    for (let r = 0; r < group.rows; r++) {
      const seriesId = group.numbers[r * perRow];
      let rows = bySeries.get(seriesId);
      if (rows === undefined) bySeries.set(seriesId, rows = { groups: [], rows: [] });
      rows.groups.push(group);
      rows.rows.push(r);
    }
  }
  return bySeries;
}

/**
 * A series' staged rows as one block of `width` columns of `kinds`: one row per time, where a time was written twice
 * the later row's fields replacing the earlier's (a field it lacks keeps its value), as the upserts of a fold do.
 * Typed from the cells when they hold one row per time and no integer beyond 2^53, else through the rows' values.
 */
export function blockOfSeriesRows(rows: SeriesRows, width: number, kinds: ReadonlyArray<FieldKind | undefined>): BlockData {
  return blockFromCells(rows, width, kinds) ?? blockFromRows(latestByTime(rowArrays(rows, width)), width, kinds);
}

/** A series' staged rows, entry after entry: row rows[i] of groups[i]. */
export interface SeriesRows {
  groups: RowGroup[];
  rows: number[];
}

/**
 * The block of a series' staged rows read straight from their cells, when they hold one row per time and no integer
 * beyond 2^53 (history as devices send it, the entries of several clients in any order); else undefined.
 */
function blockFromCells(rows: SeriesRows, width: number, kinds: ReadonlyArray<FieldKind | undefined>): BlockData | undefined {
  const s = inTimeOrder(rows);
  const n = s.rows.length;
  const ms = new Float64Array(n);
  const sub = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const g = s.groups[i];
    const at = s.rows[i] * (3 + g.width);
    ms[i] = g.numbers[at + 1];
    sub[i] = g.numbers[at + 2];
    if (i > 0 && (ms[i] - ms[i - 1] || sub[i] - sub[i - 1]) <= 0) return undefined;
  }
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < width; c++) {
    const kind = kinds[c];
    if (kind === undefined) continue;
    if (kind === STRING) {
      columns[c] = stringColumn(s, c, n);
      continue;
    }
    const present = new Uint8Array(n);
    const values = kind === BOOLEAN ? new Uint8Array(n) : new Float64Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const g = s.groups[i];
      if (c >= g.width) continue;
      const at = s.rows[i] * (3 + g.width) + 3 + c;
      const v = g.numbers[at];
      if (Number.isNaN(v)) {
        if (g.others?.has(at) === true) return undefined;
        continue;
      }
      present[i] = 1;
      // as a shard table keeps them: booleans 0/1, integers as integers (no -0)
      values[k++] = kind === BOOLEAN ? (v === 1 ? 1 : 0) : kind === FLOAT ? v : v + 0;
    }
    if (k > 0) columns[c] = { kind, present: k < n ? present : undefined, values: values.slice(0, k) };
  }
  return { ms, sub, columns };
}

/** A string field's column of the rows (strings are kept beside the cells, by cell). */
function stringColumn(s: SeriesRows, c: number, n: number): Column | undefined {
  const present = new Uint8Array(n);
  const values: string[] = [];
  for (let i = 0; i < n; i++) {
    const g = s.groups[i];
    const v = c < g.width ? g.others?.get(s.rows[i] * (3 + g.width) + 3 + c) : undefined;
    if (typeof v !== 'string') continue;
    present[i] = 1;
    values.push(v);
  }
  return values.length === 0 ? undefined : { kind: STRING, present: values.length < n ? present : undefined, values };
}

/** The rows sorted by time (stable: a time written twice keeps its order), or as they are when already sorted. */
function inTimeOrder(s: SeriesRows): SeriesRows {
  const time = (i: number) => s.groups[i].numbers[s.rows[i] * (3 + s.groups[i].width) + 1];
  const subOf = (i: number) => s.groups[i].numbers[s.rows[i] * (3 + s.groups[i].width) + 2];
  const compareAt = (i: number, j: number) => time(i) - time(j) || subOf(i) - subOf(j);
  let sorted = true;
  for (let i = 1; sorted && i < s.rows.length; i++) sorted = compareAt(i - 1, i) <= 0;
  if (sorted) return s;
  const order = s.rows.map((_, i) => i).sort((i, j) => compareAt(i, j) || i - j);
  return { groups: order.map((i) => s.groups[i]), rows: order.map((i) => s.rows[i]) };
}

/** A series' staged rows as a shard table's rows (SELECT *: series_id, t_ms, t_ns, c0 .. c<width - 1>). */
function rowArrays(s: SeriesRows, width: number): unknown[][] {
  return s.rows.map((r, i) => {
    const g = s.groups[i];
    const at = r * (3 + g.width);
    const row: unknown[] = new Array(3 + width).fill(null);
    for (let c = 0; c < 3; c++) row[c] = g.numbers[at + c];
    for (let c = 0; c < g.width; c++) {
      const v = g.numbers[at + 3 + c];
      if (!Number.isNaN(v)) row[3 + c] = g.kinds[c] === 'i' ? BigInt(v) : v;
      else row[3 + c] = g.others?.get(at + 3 + c) ?? null;
    }
    return row;
  });
}

/**
 * A series' staged rows (entry after entry, each in key order) in time order, one row per time: where several rows
 * hold the same time, the later row's fields replace the earlier's and a field it lacks keeps its value.
 */
function latestByTime(rows: unknown[][]): unknown[][] {
  let sorted = true;
  for (let i = 1; sorted && i < rows.length; i++) sorted = compare(rows[i - 1], rows[i]) < 0;
  if (sorted) return rows;
  // stable: equal times keep their order, the later write last
  const order = rows.map((_, i) => i).sort((a, b) => compare(rows[a], rows[b]) || a - b);
  const out: unknown[][] = [];
  for (const i of order) {
    const row = rows[i];
    const last = out.at(-1);
    if (last !== undefined && compare(last, row) === 0) {
      const merged = last.slice();
      for (let c = 3; c < row.length; c++) if (row[c] !== null) merged[c] = row[c];
      out[out.length - 1] = merged;
    } else out.push(row);
  }
  return out;
}

const compare = (a: unknown[], b: unknown[]) => (a[1] as number) - (b[1] as number) || (a[2] as number) - (b[2] as number);
