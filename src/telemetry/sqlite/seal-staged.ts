// Staged points of a window already due for sealing go straight into its blocks (docs/api.md#telemetry-blocks),
// without being folded into the window's shard table first and read back out of it by the seal: history written late
// (a gateway's backlog, an import, a month loaded at once) costs one block rewrite per slice instead of a B-tree
// insert, a read, a delete and a block rewrite per point.
//
// Done by the fold worker (fold-worker.ts) in two steps, so the write lock is held only to store:
// 1. prepare, in a read snapshot and without the lock: the oldest staged entries of a due window whose shard table is
//    empty, their points merged by series and time (the later entry wins field by field, as the upserts of a fold do),
//    each series' block read and rewritten with them;
// 2. store, holding the lock: only if nothing they were made from changed since (the entries are still staged
//    unfolded, the tables still empty, no block changed: the seal generation is the same), the blocks are written, the
//    entries deleted and the window marked sealed in one transaction; else nothing is, and the entries are folded the
//    usual way.
// A window whose shard table holds rows (folded before it was due, or by a read's settle) keeps the usual path: its
// rows are older than the staged points, and a block that took these would be overruled by them. Its entries alone
// are folded then, not the oldest of every window: a fold of the entries of the windows behind it would send them the
// long way too, and the next, one after another.
import { BOOLEAN, FLOAT, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import type { BlockData, Column } from '../blocks/index.ts';
import { blockFromRows, blockRow, GRACE_DIVISOR, type SealStep } from '../blocks/rows.ts';
import { stagedGroup, type RowGroup } from './shard-rows.ts';
import { blockStatements, fieldKindsOf, markSealed, noteSealChange, SEAL_GENERATION_KEY, type SealHandle, type WindowOf } from './seal.ts';

/**
 * Staged points taken into one direct sealing at most, as a whole number of entries (each holds up to 4,096): half a
 * day of 20 devices every 10 s, and ~7 MB of cells in the worker (200,000 was as fast and took ~15 MB more at peak).
 */
const SLICE_ROWS = 100_000;

/**
 * Points already in a window's blocks that a direct sealing may rewrite for each point it adds, at most, while the
 * writes are still in that window: beyond, the points take the usual way (folded into the shard table, merged by the
 * next sealing pass), which cost the fold worker about as much per point as rewriting ten (bench/README.md). Once the
 * writes have moved past the window its last points go straight whatever their number: they end it.
 */
const REWRITE_LIMIT = 8;

interface Window extends WindowOf {
  table_name: string;
}

/** Blocks made from staged entries of one window, to store if nothing changed since (storeStagedSeal). */
export interface StagedSeal {
  ids: number[];
  generation: string | undefined;
  window: Window;
  blocks: Array<{ seriesId: number; row: ReturnType<typeof blockRow> }>;
  step: SealStep;
}

/** The staged entries of one due window to fold the usual way (into its shard table), and none of the others. */
export interface FoldWindow { fold: string }

/**
 * Step 1, in a read transaction of the caller: the blocks of the oldest staged entries of the due window staged
 * first. While the writes may still add to that window, 'gather' (nothing is made): unless `now` is set, it is sealed
 * only once a later window of its namespace has staged points too (the writes moved on) or its points fill a slice, so
 * a window loaded in time order is rewritten once instead of once per write. Its shard table when its entries are to
 * be folded instead: the table holds rows, or the points are too few for the blocks they would rewrite
 * (REWRITE_LIMIT). Undefined when no due window has staged points.
 */
export function prepareStagedSeal(db: SealHandle, nowMs: number, now: boolean): StagedSeal | FoldWindow | 'gather' | undefined {
  const first = db.prepare(`SELECT sh.namespace_id, sh.shard_window, sh.table_name, sh.start_ms, sh.end_ms, sh.columns, sum(st.rows - st.folded) AS staged
    FROM telemetry_staged st JOIN telemetry_shards sh ON sh.table_name = st.shard_table
    WHERE sh.end_ms + (sh.end_ms - sh.start_ms) / ${GRACE_DIVISOR} <= ?
    GROUP BY sh.table_name ORDER BY min(st.id) LIMIT 1`).get(nowMs) as (Window & { staged: number }) | undefined;
  if (first === undefined) return undefined;
  const { staged, ...w } = first;
  if (db.prepare(`SELECT 1 FROM "${w.table_name}" LIMIT 1`).get() !== undefined) return { fold: w.table_name };
  const movedOn = db.prepare(`SELECT 1 FROM telemetry_staged st JOIN telemetry_shards sh ON sh.table_name = st.shard_table
    WHERE sh.namespace_id = ? AND sh.start_ms > ? LIMIT 1`).get(w.namespace_id, w.start_ms) !== undefined;
  if (!now && staged < SLICE_ROWS && !movedOn) return 'gather';
  // a trickle of points into a window the writes are in, whose blocks hold many already: folded, and merged by the
  // next sealing pass
  if (!movedOn) {
    const stored = db.prepare('SELECT coalesce(sum(rows), 0) FROM telemetry_blocks WHERE namespace_id = ? AND start_ms = ?')
      .pluck().get(w.namespace_id, w.start_ms) as number;
    if (staged * REWRITE_LIMIT < stored) return { fold: w.table_name };
  }
  const ids: number[] = [];
  let taken = 0;
  for (const e of db.prepare('SELECT id, rows FROM telemetry_staged WHERE shard_table = ? AND folded = 0 ORDER BY id').all(w.table_name) as Array<{ id: number; rows: number }>) {
    if (ids.length > 0 && taken + e.rows > SLICE_ROWS) break;
    ids.push(e.id);
    taken += e.rows;
  }
  // every entry's rows by series, in entry order (ids ascend)
  const entryOf = db.prepare('SELECT shard_table, width, kinds, rows, cells, others FROM telemetry_staged WHERE id = ?');
  const bySeries = new Map<number, SeriesRows>();
  for (const id of ids) {
    const group = stagedGroup(entryOf.get(id) as Parameters<typeof stagedGroup>[0]);
    const perRow = 3 + group.width;
    for (let r = 0; r < group.rows; r++) {
      const seriesId = group.numbers[r * perRow];
      let rows = bySeries.get(seriesId);
      if (rows === undefined) bySeries.set(seriesId, rows = { groups: [], rows: [] });
      rows.groups.push(group);
      rows.rows.push(r);
    }
  }
  const blocks = blockStatements(db);
  const kindsOf = fieldKindsOf(db, w.namespace_id);
  const step: SealStep = { namespaceId: w.namespace_id, window: w.shard_window, table: w.table_name, series: 0, points: 0, bytes: 0, done: false };
  const out: StagedSeal['blocks'] = [];
  for (const [seriesId, rows] of bySeries) {
    const kinds = kindsOf(seriesId);
    const block = blockFromCells(rows, w.columns, kinds) ?? blockFromRows(latestByTime(rowArrays(rows, w.columns)), w.columns, kinds);
    const row = blockRow(blocks.withBlock(seriesId, w, block));
    out.push({ seriesId, row });
    step.series++;
    step.points += rows.rows.length;
    step.bytes += row.data.byteLength + row.stats.byteLength;
  }
  return { ids, generation: generationOf(db), window: w, blocks: out, step };
}

/**
 * Step 2, in a write transaction of the caller: stores what prepareStagedSeal made, when nothing it was made from
 * changed since. Returns whether it did (false: nothing was written).
 */
export function storeStagedSeal(db: SealHandle, prepared: StagedSeal): boolean {
  const { ids, window: w } = prepared;
  if (generationOf(db) !== prepared.generation) return false;
  const stillStaged = db.prepare(`SELECT count(*) FROM telemetry_staged WHERE folded = 0 AND id IN (${ids.join(', ')})`).pluck().get() as number;
  if (stillStaged !== ids.length || db.prepare(`SELECT 1 FROM "${w.table_name}" LIMIT 1`).get() !== undefined) return false;
  const blocks = blockStatements(db);
  for (const b of prepared.blocks) blocks.store(b.seriesId, w, b.row);
  markSealed(db, w);
  db.prepare(`DELETE FROM telemetry_staged WHERE id IN (${ids.join(', ')})`).run();
  noteSealChange(db);
  return true;
}

const generationOf = (db: SealHandle) =>
  db.prepare('SELECT value FROM settings WHERE key = ?').pluck().get(SEAL_GENERATION_KEY) as string | undefined;

/** A series' staged rows, entry after entry: row rows[i] of groups[i]. */
interface SeriesRows {
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
