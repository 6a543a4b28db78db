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
import { blockRow, GRACE_DIVISOR, type SealStep } from '../blocks/rows.ts';
import { blockOfSeriesRows, rowsBySeries } from '../blocks/row-groups.ts';
import { stagedGroup } from './shard-rows.ts';
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
  const bySeries = rowsBySeries(ids.map((id) => stagedGroup(entryOf.get(id) as Parameters<typeof stagedGroup>[0])));
  const blocks = blockStatements(db);
  const kindsOf = fieldKindsOf(db, w.namespace_id);
  const step: SealStep = { namespaceId: w.namespace_id, window: w.shard_window, table: w.table_name, series: 0, points: 0, bytes: 0, done: false };
  const out: StagedSeal['blocks'] = [];
  for (const [seriesId, rows] of bySeries) {
    const kinds = kindsOf(seriesId);
    const block = blockOfSeriesRows(rows, w.columns, kinds);
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

