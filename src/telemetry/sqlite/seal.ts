// Sealing on SQLite (docs/api.md#telemetry-blocks): the points of a closed shard window move from the window's shard
// table into one compressed block per series (telemetry_blocks), series by series, each in the transaction that
// deletes its rows, so a read sees a point either in the table or in its block, never neither. A late point for a
// sealed window lands in a shard table again (made anew by the writer); the next seal merges it into the block, the
// later write winning field by field, as a read merging both does meanwhile.
//
// Runs where the writes are: in the fold worker on a database in a file (fold-worker.ts), else on the main thread
// (seal-driver.ts). It knows the handle only, not the catalogue mirror, so the worker's bundle stays small; mirrors
// on other connections notice a seal by the settings row it changes (catalogue.ts, SEAL_GENERATION_KEY).
import type { Statement } from 'better-sqlite3';
import { decodeBlock, type BlockData } from '../blocks/index.ts';
import { blockFromRows, blockRow, GRACE_DIVISOR, mergeBlocks, type SealStep } from '../blocks/rows.ts';
import { FIELD_TYPES, type FieldKind } from '../line-protocol/line-scanner.ts';

export type { SealStep } from '../blocks/rows.ts';

/** What sealing needs of a connection: better-sqlite3's Database, or the raw handle of the main connection. */
export interface SealHandle {
  prepare(sqlText: string): Statement;
  exec(sqlText: string): unknown;
}

/** Settings row changed by every sealing transaction (the catalogue mirrors of other connections watch it). */
export const SEAL_GENERATION_KEY = 'telemetry.sealed';


interface DueWindow {
  namespace_id: number;
  shard_window: number;
  table_name: string;
  start_ms: number;
  end_ms: number;
  columns: number;
}

/**
 * Windows whose shard table may be sealed at `nowMs`: closed for the grace period, and with nothing staged for them
 * (the fold comes first). Oldest first.
 */
export function dueWindows(db: SealHandle, nowMs: number, limit = 1000): DueWindow[] {
  const staged = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'telemetry_staged'").get() !== undefined;
  return db.prepare(`SELECT namespace_id, shard_window, table_name, start_ms, end_ms, columns FROM telemetry_shards
    WHERE end_ms + (end_ms - start_ms) / ${GRACE_DIVISOR} <= ?
    ${staged ? 'AND NOT EXISTS (SELECT 1 FROM telemetry_staged st WHERE st.shard_table = table_name)' : ''}
    ORDER BY end_ms, namespace_id LIMIT ?`).all(nowMs, limit) as DueWindow[];
}

/**
 * Seals series of the oldest due window, in the caller's open write transaction, until `enough(points)` says so after
 * a series (or the window is done). Undefined when no window is due.
 */
export function sealStep(db: SealHandle, nowMs: number, enough: (points: number) => boolean): SealStep | undefined {
  const [w] = dueWindows(db, nowMs, 1);
  if (w === undefined) return undefined;
  return sealWindow(db, w, enough);
}

/** Seals series of one window (see sealStep). */
export function sealWindow(db: SealHandle, w: DueWindow, enough: (points: number) => boolean): SealStep {
  const table = `"${w.table_name}"`;
  const step: SealStep = { namespaceId: w.namespace_id, window: w.shard_window, table: w.table_name, series: 0, points: 0, bytes: 0, done: false };
  const nextSeries = db.prepare(`SELECT series_id FROM ${table} ORDER BY series_id LIMIT 1`).pluck();
  const rowsOf = db.prepare(`SELECT * FROM ${table} WHERE series_id = ? ORDER BY t_ms, t_ns`).raw(true).safeIntegers(true);
  const deleteRows = db.prepare(`DELETE FROM ${table} WHERE series_id = ?`);
  const blocks = blockStatements(db);
  const kinds = fieldKindsOf(db, w.namespace_id);
  markSealed(db, w);
  for (;;) {
    const seriesId = nextSeries.get() as number | undefined;
    if (seriesId === undefined) break;
    const rows = rowsOf.all(seriesId) as unknown[][];
    const written = blocks.store(seriesId, w, blocks.withRows(seriesId, w, rows, kinds(seriesId)));
    deleteRows.run(seriesId);
    step.series++;
    step.points += rows.length;
    step.bytes += written;
    if (enough(step.points)) break;
  }
  if (nextSeries.get() === undefined) {
    db.exec(`DROP TABLE ${table}`);
    db.prepare('DELETE FROM telemetry_shards WHERE namespace_id = ? AND shard_window = ?').run(w.namespace_id, w.shard_window);
    step.done = true;
  }
  noteSealChange(db);
  return step;
}

/**
 * After sealing dropped shard tables: their pages go back to the disk (a file made with auto_vacuum = INCREMENTAL; an
 * older one reuses them for later writes instead), and the WAL is checkpointed and cut to nothing. Outside a
 * transaction, holding the write lock (a TRUNCATE checkpoint keeps writers out while it runs).
 */
export function giveBackPages(db: SealHandle & { pragma(source: string): unknown }): void {
  db.pragma('incremental_vacuum');
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/** Inside a transaction that changed sealed windows or blocks: other connections' mirrors read them again. */
export function noteSealChange(db: SealHandle): void {
  db.prepare(`INSERT INTO settings (key, value) VALUES (?, '1')
    ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`).run(SEAL_GENERATION_KEY);
}

/** The window's blocks may hold points from now on (readers look for them). */
export function markSealed(db: SealHandle, w: WindowOf): void {
  db.prepare('INSERT OR IGNORE INTO telemetry_sealed (namespace_id, shard_window, start_ms, end_ms) VALUES (?, ?, ?, ?)')
    .run(w.namespace_id, w.shard_window, w.start_ms, w.end_ms);
}

/** A window as sealing needs it (a row of telemetry_shards). */
export type WindowOf = Omit<DueWindow, 'table_name'>;

/** A series' block of a window read, merged with later rows, and stored. */
export interface BlockStatements {
  /** the stored block (if any) with `rows` (shard-table rows of the series, in key order, one per time) merged in */
  withRows(seriesId: number, w: WindowOf, rows: readonly unknown[][], kinds: ReadonlyArray<FieldKind | undefined>): BlockData;
  /** the stored block (if any) with `block`'s points merged in */
  withBlock(seriesId: number, w: WindowOf, block: BlockData): BlockData;
  /** stores the block (replacing the earlier one); returns the bytes written */
  store(seriesId: number, w: WindowOf, block: BlockData | ReturnType<typeof blockRow>): number;
}

export function blockStatements(db: SealHandle): BlockStatements {
  const blockOf = db.prepare('SELECT data FROM telemetry_blocks WHERE series_id = ? AND start_ms = ?').pluck();
  const store = db.prepare(`INSERT INTO telemetry_blocks (series_id, start_ms, namespace_id, rows, first_ms, last_ms, stats, data)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (series_id, start_ms) DO UPDATE SET
    rows = excluded.rows, first_ms = excluded.first_ms, last_ms = excluded.last_ms, stats = excluded.stats, data = excluded.data`);
  return {
    withRows(seriesId, w, rows, kinds) {
      return this.withBlock(seriesId, w, blockFromRows(rows, w.columns, kinds));
    },
    withBlock(seriesId, w, block) {
      const stored = blockOf.get(seriesId, w.start_ms) as Uint8Array | undefined;
      return stored === undefined ? block : mergeBlocks(decodeBlock(stored), block);
    },
    store(seriesId, w, block) {
      const row = 'data' in block ? block : blockRow(block);
      store.run(seriesId, w.start_ms, w.namespace_id, row.rows, row.firstMs, row.lastMs, row.stats, row.data);
      return row.data.byteLength + row.stats.byteLength;
    },
  };
}

/** The kind of each field of a series' measurement, by ordinal, per series (cached by measurement). */
export function fieldKindsOf(db: SealHandle, namespaceId: number): (seriesId: number) => Array<FieldKind | undefined> {
  const measurementOf = db.prepare('SELECT measurement FROM telemetry_series WHERE id = ?').pluck();
  const fieldsOf = db.prepare('SELECT ordinal, type FROM telemetry_fields WHERE namespace_id = ? AND measurement = ?');
  const byMeasurement = new Map<string, Array<FieldKind | undefined>>();
  return (seriesId) => {
    const measurement = measurementOf.get(seriesId) as string;
    let kinds = byMeasurement.get(measurement);
    if (kinds === undefined) {
      kinds = [];
      for (const f of fieldsOf.all(namespaceId, measurement) as Array<{ ordinal: number; type: string }>) {
        kinds[f.ordinal] = FIELD_TYPES.indexOf(f.type as never) as FieldKind;
      }
      byMeasurement.set(measurement, kinds);
    }
    return kinds;
  };
}
