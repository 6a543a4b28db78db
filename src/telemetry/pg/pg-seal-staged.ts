// Staged points of a window already due for sealing go straight into its blocks on PostgreSQL, as on SQLite
// (sqlite/seal-staged.ts, docs/api.md#telemetry-blocks): a fold (pg-staging.ts) that finds a staged row bound for a
// due window whose shard table is empty deletes the row, makes a block of each series' points from its arrays and
// merges it into the series' stored block, in its own transaction, instead of inserting the points into the shard
// table for the seal (pg-seal.ts) to read back, delete and merge. The server stores a block per series and slice
// instead of a B-tree entry per point, its deletion and a block.
//
// What stays true:
// - The later write wins: the fold takes the namespace's batches in order under its fold lock, as every fold does,
//   and only where the shard table is empty. Its rows would be older than the staged points (folded earlier) and
//   overrule a block that took these when sealed; such a window keeps the usual way until the seal has emptied it.
// - A read sees every point in one place or the other: the window is marked sealed (telemetry_sealed, a catalogue
//   change, in a transaction of its own that takes the catalogue's row first: markSealing) before any of its points
//   go into blocks, so the reads of its window look at its blocks as well as its table.
// - Nothing is half-written: the staged row is deleted in the transaction that writes its blocks.
import { sql } from 'kysely';
import type { Db } from '../../db/open.ts';
import { decodeBlock } from '../blocks/index.ts';
import { blockRow, mergeBlocks, type SealStep } from '../blocks/rows.ts';
import { blockOfSeriesRows, rowsBySeries, type RowGroup } from '../blocks/row-groups.ts';
import { catalogueChanging } from './pg-catalogue.ts';
import { arrayLength, eachArrayElement } from './pg-shards.ts';
import { measurementFields, storeBlock, type DueWindow } from './pg-seal.ts';

/** A staged row bound for a due window whose shard table is empty. */
export interface StraightPart {
  batch: string;
  part: number;
  columns: string[];
  points: number;
  window: DueWindow;
}

/** Marks these windows sealed (telemetry_sealed) while their shard rows exist: their blocks may be written from now on. */
export async function markSealing(db: Db, windows: readonly DueWindow[]): Promise<void> {
  await db.tx(async (tx) => {
    await catalogueChanging(tx);
    for (const w of windows) {
      await tx.run(sql`INSERT INTO telemetry_sealed (namespace_id, shard_window, start_ms, end_ms)
        SELECT namespace_id, shard_window, start_ms, end_ms FROM telemetry_shards WHERE table_name = ${w.table_name}
        ON CONFLICT (namespace_id, shard_window) DO NOTHING`);
    }
  });
}

interface StagedArrays {
  batch: string;
  part: number;
  ids: Buffer;
  ms: Buffer;
  ns: Buffer;
  f: Buffer | null;
  i: Buffer | null;
  s: Buffer | null;
}

/** A staged row's arrays as its writer sent them (binary), kept for the fold: the key, db.memo's. */
const KEPT = Symbol('staged arrays sent');
/** Bytes of sent arrays kept at most (what MAX_BACKLOG batches of 5,000 points send), the oldest dropped first. */
const MAX_KEPT_BYTES = 16 << 20;

interface Kept { rows: Map<string, Omit<StagedArrays, 'batch' | 'part'>>; bytes: number }

function keptOf(db: Db): Kept {
  let kept = db.memo.get(KEPT) as Kept | undefined;
  if (kept === undefined) db.memo.set(KEPT, kept = { rows: new Map(), bytes: 0 });
  return kept;
}

const sizeOf = (a: Omit<StagedArrays, 'batch' | 'part'>) => a.ids.length + a.ms.length + a.ns.length + (a.f?.length ?? 0) + (a.i?.length ?? 0) + (a.s?.length ?? 0);

/**
 * The arrays a write staged as row (batch, part), as it sent them, for a fold in this process that takes the row
 * straight into blocks: it then deletes the row without reading the arrays back (they would come as text, twice their
 * size, for the node to decode). Only arrays sent in the binary format are kept (text-form ones are read back).
 */
export function keepStaged(db: Db, batch: string, part: number, arrays: Record<'ids' | 'ms' | 'ns' | 'f' | 'i' | 's', Buffer | string | null>): void {
  const { ids, ms, ns, f, i, s } = arrays;
  if (!Buffer.isBuffer(ids) || !Buffer.isBuffer(ms) || !Buffer.isBuffer(ns)) return;
  if ([f, i, s].some((a) => a !== null && !Buffer.isBuffer(a))) return;
  const kept = keptOf(db);
  const row = { ids, ms, ns, f: f as Buffer | null, i: i as Buffer | null, s: s as Buffer | null };
  kept.rows.set(`${batch}/${part}`, row);
  kept.bytes += sizeOf(row);
  for (const [key, old] of kept.rows) {
    if (kept.bytes <= MAX_KEPT_BYTES) break;
    kept.rows.delete(key);
    kept.bytes -= sizeOf(old);
  }
}

/** The arrays kept for staged row (batch, part), no longer kept (undefined: none). */
export function takeStaged(db: Db, batch: string, part: number): Omit<StagedArrays, 'batch' | 'part'> | undefined {
  const kept = db.memo.get(KEPT) as Kept | undefined;
  const key = `${batch}/${part}`;
  const row = kept?.rows.get(key);
  if (row !== undefined) {
    kept!.rows.delete(key);
    kept!.bytes -= sizeOf(row);
  }
  return row;
}

/**
 * Deletes the staged rows of `parts` (in the caller's transaction, which holds the namespace's fold lock) and merges
 * their points into the blocks of their windows; returns one step per window, for the sealing's progress.
 */
export async function sealPartsStraight(tx: Db, namespaceId: number, parts: readonly StraightPart[]): Promise<SealStep[]> {
  if (parts.length === 0) return [];
  // the arrays this process sent for a row are not read back: the row is only deleted
  const sent = new Map<string, Omit<StagedArrays, 'batch' | 'part'>>();
  for (const p of parts) {
    const arrays = takeStaged(tx, p.batch, p.part);
    if (arrays !== undefined) sent.set(`${p.batch}/${p.part}`, arrays);
  }
  const keysOf = (list: readonly StraightPart[]) => sql.join(list.map((p) => sql`(${p.batch}::bigint, ${p.part}::integer)`));
  const known = parts.filter((p) => sent.has(`${p.batch}/${p.part}`));
  const unknown = parts.filter((p) => !sent.has(`${p.batch}/${p.part}`));
  const byKey = new Map<string, Omit<StagedArrays, 'batch' | 'part'>>();
  if (known.length > 0) {
    const deleted = await tx.all(sql<{ batch: string; part: number }>`DELETE FROM telemetry_staged WHERE (batch, part) IN (${keysOf(known)})
      RETURNING batch::text AS batch, part`);
    for (const r of deleted) byKey.set(`${r.batch}/${r.part}`, sent.get(`${r.batch}/${r.part}`)!);
  }
  if (unknown.length > 0) {
    const rows = await tx.all(sql<StagedArrays>`DELETE FROM telemetry_staged WHERE (batch, part) IN (${keysOf(unknown)})
      RETURNING batch::text AS batch, part, array_send(series_ids) AS ids, array_send(t_ms) AS ms, array_send(t_ns) AS ns,
        array_send(f) AS f, array_send(i) AS i, array_send(s) AS s`);
    for (const r of rows) byKey.set(`${r.batch}/${r.part}`, r);
  }
  // each window's parts in batch order (the later write last)
  const windows = new Map<string, { window: DueWindow; groups: RowGroup[] }>();
  for (const p of parts) {
    const arrays = byKey.get(`${p.batch}/${p.part}`);
    if (arrays === undefined) throw new Error(`telemetry fold: staged row ${p.batch}/${p.part} is gone`);
    let entry = windows.get(p.window.table_name);
    if (entry === undefined) windows.set(p.window.table_name, entry = { window: p.window, groups: [] });
    entry.groups.push(stagedRowGroup(p.window.table_name, p.columns, arrays));
  }
  const fieldsOf = await measurementFields(tx, namespaceId);
  const steps: SealStep[] = [];
  for (const { window: w, groups } of windows.values()) {
    const bySeries = rowsBySeries(groups);
    const ids = [...bySeries.keys()];
    const measurements = new Map((await tx.all(sql<{ id: number; measurement: string }>`SELECT id, measurement FROM telemetry_series
      WHERE id = ANY(${ids}::bigint[])`)).map((r) => [Number(r.id), r.measurement]));
    const stored = new Map((await tx.all(sql<{ series_id: number; data: Uint8Array }>`SELECT series_id, data FROM telemetry_blocks
      WHERE start_ms = ${w.start_ms} AND series_id = ANY(${ids}::bigint[])`)).map((r) => [Number(r.series_id), r.data]));
    const step: SealStep = { namespaceId, window: w.shard_window, table: w.table_name, series: 0, points: 0, bytes: 0, done: false };
    for (const [seriesId, seriesRows] of bySeries) {
      const kinds = fieldsOf.get(measurements.get(seriesId) ?? '') ?? [];
      const block = blockOfSeriesRows(seriesRows, w.columns, Array.from({ length: Math.min(kinds.length, w.columns) }, (_, n) => kinds[n]));
      const prior = stored.get(seriesId);
      step.bytes += await storeBlock(tx, seriesId, w, prior === undefined ? block : mergeBlocks(decodeBlock(prior), block));
      step.series++;
      step.points += seriesRows.rows.length;
    }
    steps.push(step);
  }
  return steps;
}

/**
 * A staged row's arrays as a row group (blocks/row-groups.ts): its columns (c<ordinal><f|i|s>) by ordinal, integers
 * beyond 2^53 and strings beside the cells. The value matrices hold row k for the k-th column of their class.
 */
export function stagedRowGroup(table: string, columns: readonly string[], a: Omit<StagedArrays, 'batch' | 'part'>): RowGroup {
  let width = 0;
  const ordinals = columns.map((c) => {
    const m = /^c(\d+)([fis])$/.exec(c);
    if (m === null) throw new Error(`telemetry fold: unexpected column ${c}`);
    width = Math.max(width, Number(m[1]) + 1);
    return { ordinal: Number(m[1]), cls: m[2] as 'f' | 'i' | 's' };
  });
  const perRow = 3 + width;
  const kinds = Array.from({ length: width }, () => '-');
  for (const o of ordinals) if (o.cls === 'i') kinds[o.ordinal] = 'i';
  const rows = arrayLength(a.ids);
  const numbers = new Float64Array(rows * perRow).fill(NaN);
  const others = new Map<number, string | bigint>();
  const int8 = (view: DataView, at: number) => view.getInt32(at) * 4294967296 + view.getUint32(at + 4);
  eachArrayElement(a.ids, (view, at, length, e) => {
    if (length !== 8) throw new Error('telemetry fold: a staged row without its series');
    numbers[e * perRow] = int8(view, at);
  });
  eachArrayElement(a.ms, (view, at, length, e) => {
    if (e >= rows || length !== 8) throw new Error('telemetry fold: staged times do not match their series');
    numbers[e * perRow + 1] = int8(view, at);
  });
  eachArrayElement(a.ns, (view, at, length, e) => {
    if (e >= rows || length !== 4) throw new Error('telemetry fold: staged times do not match their series');
    numbers[e * perRow + 2] = view.getInt32(at);
  });
  for (const cls of ['f', 'i', 's'] as const) {
    const targets = ordinals.filter((o) => o.cls === cls).map((o) => o.ordinal);
    const bytes = a[cls];
    if (targets.length === 0 || bytes === null) continue;
    eachArrayElement(bytes, (view, at, length, e) => {
      const k = Math.floor(e / rows);
      const r = e - k * rows;
      if (k >= targets.length) throw new Error('telemetry fold: staged values do not match their columns');
      if (length < 0) return;
      const cell = r * perRow + 3 + targets[k];
      if (cls === 'f') numbers[cell] = view.getFloat64(at);
      else if (cls === 's') others.set(cell, bytes.toString('utf8', at, at + length));
      else {
        const high = view.getInt32(at);
        // exact below 2^53 in magnitude; beyond it the cell stays NaN and the value is kept beside it
        if (high >= -0x200000 && high < 0x200000 && !(high === -0x200000 && view.getUint32(at + 4) === 0)) numbers[cell] = int8(view, at);
        else others.set(cell, view.getBigInt64(at));
      }
    });
  }
  return { table, width, kinds: kinds.join(''), rows, numbers, others: others.size === 0 ? undefined : others };
}
