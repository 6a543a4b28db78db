// Sealing on PostgreSQL (docs/api.md#telemetry-blocks): as on SQLite (sqlite/seal.ts), the points of a closed window
// move into one block per series, each series in the transaction that deletes its rows, and the shard table goes once
// empty. Any node may seal, a transaction at a time:
// - each transaction takes the catalogue's version row first (catalogueChanging), like every path that may change the
//   catalogue, so sealing transactions of all nodes follow one another and never wait in a circle with a writer;
// - the first transaction of a window records it in telemetry_sealed, the last deletes its telemetry_shards row and
//   drops the table, with the row taken FOR UPDATE: a write staging points for that table meanwhile waits, then finds
//   the shard gone (a foreign key) and makes it again, as after a prune. Only those two change the catalogue version.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/open.ts';
import { decodeBlock, type BlockData } from '../blocks/index.ts';
import { FIELD_TYPES, type FieldKind } from '../line-protocol/line-scanner.ts';
import { blockRow, GRACE_DIVISOR, mergeBlocks, type SealStep } from '../blocks/rows.ts';
import { catalogueChanging, dropsShardTables } from './pg-catalogue.ts';
import { columnOfArray, decodeArray, pgColumn } from './pg-shards.ts';

/** A shard window (its telemetry_shards row), as sealing takes it. */
export interface DueWindow { namespace_id: number; shard_window: number; table_name: string; start_ms: number; end_ms: number; columns: number }

/**
 * Seals series of the oldest window due at `nowMs` (closed for the grace period, nothing staged for it; none of the
 * tables `skip`) in one transaction, until `enough(points)` after a series; undefined when nothing is due.
 */
export async function sealStepPg(db: Db, nowMs: number, enough: (points: number) => boolean, skip: readonly string[] = []): Promise<SealStep | undefined> {
  return db.tx(async (tx) => {
    await catalogueChanging(tx);
    const w = await tx.get(sql<DueWindow>`SELECT namespace_id, shard_window, table_name, start_ms, end_ms, columns FROM telemetry_shards s
      WHERE end_ms + (end_ms - start_ms) / ${GRACE_DIVISOR} <= ${nowMs}
        AND NOT EXISTS (SELECT 1 FROM telemetry_staged st WHERE st.table_name = s.table_name)
        ${skip.length > 0 ? sql`AND NOT (s.table_name = ANY(${[...skip]}))` : sql``}
      ORDER BY end_ms, namespace_id LIMIT 1 FOR UPDATE`);
    if (w === undefined) return undefined;
    return sealWindow(tx, w, enough);
  });
}

async function sealWindow(tx: Db, w: DueWindow, enough: (points: number) => boolean): Promise<SealStep> {
  const step: SealStep = { namespaceId: w.namespace_id, window: w.shard_window, table: w.table_name, series: 0, points: 0, bytes: 0, done: false };
  const known = await tx.get(sql`SELECT 1 AS one FROM telemetry_sealed WHERE namespace_id = ${w.namespace_id} AND shard_window = ${w.shard_window}`);
  if (known === undefined) {
    await tx.run(sql`INSERT INTO telemetry_sealed (namespace_id, shard_window, start_ms, end_ms)
      VALUES (${w.namespace_id}, ${w.shard_window}, ${w.start_ms}, ${w.end_ms})`);
  }
  const fieldsOf = await measurementFields(tx, w.namespace_id);
  const table = sql.id(w.table_name);
  for (;;) {
    const next = await tx.get(sql<{ series_id: number; measurement: string }>`SELECT p.series_id, s.measurement FROM ${table} p
      JOIN telemetry_series s ON s.id = p.series_id ORDER BY p.series_id LIMIT 1`);
    if (next === undefined) break;
    const kinds = fieldsOf.get(next.measurement) ?? [];
    const block = await seriesBlock(tx, table, next.series_id, Array.from({ length: Math.min(kinds.length, w.columns) }, (_, n) => kinds[n]));
    const stored = await tx.get(sql<{ data: Uint8Array }>`SELECT data FROM telemetry_blocks WHERE series_id = ${next.series_id} AND start_ms = ${w.start_ms}`);
    step.bytes += await storeBlock(tx, next.series_id, w, stored === undefined ? block : mergeBlocks(decodeBlock(stored.data), block));
    await tx.run(sql`DELETE FROM ${table} WHERE series_id = ${next.series_id}`);
    step.series++;
    step.points += block.ms.length;
    if (enough(step.points)) break;
  }
  // the window's row is ours (FOR UPDATE): what is staged for its table now stays staged until it is folded
  const staged = await tx.get(sql`SELECT 1 AS one FROM telemetry_staged WHERE table_name = ${w.table_name} LIMIT 1`);
  if (staged === undefined && await tx.get(sql`SELECT 1 AS one FROM ${table} LIMIT 1`) === undefined) {
    step.done = await dropWindowTable(tx, w);
  }
  return step;
}

/**
 * Drops the emptied table once the read snapshots begun before are through (dropsShardTables); while one runs longer
 * than DROP_WAIT_MS the table stays (the window is sealed again, and its table dropped, by a later step), so reads
 * never queue behind a drop for longer.
 */
async function dropWindowTable(tx: Db, w: DueWindow): Promise<boolean> {
  try {
    await tx.tx(async (inner) => {
      await dropsShardTables(inner, DROP_WAIT_MS);
      await inner.run(sql`DROP TABLE ${sql.id(w.table_name)}`);
      await inner.run(sql`DELETE FROM telemetry_shards WHERE namespace_id = ${w.namespace_id} AND shard_window = ${w.shard_window}`);
    });
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return false;
    throw err;
  }
}

const DROP_WAIT_MS = 100;
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * A series' rows of a shard table as a block: the times and every field of its measurement the table has a column for,
 * each fetched as one array in the binary format (array_send) and decoded into its typed column (pg-shards.ts
 * columnOfArray), not a row per point.
 */
async function seriesBlock(tx: Db, table: RawBuilder<unknown>, seriesId: number, kinds: ReadonlyArray<FieldKind | undefined>): Promise<BlockData> {
  const agg = (e: string) => `array_send(array_agg(${e} ORDER BY t_ms, t_ns))`;
  const cols = kinds.map((kind, n) => (kind === undefined ? 'NULL::bytea' : agg(pgColumn(n, kind))));
  const [times, subs, ...values] = (await tx.rows<Array<Buffer | null>>(sql`SELECT ${sql.raw([agg('t_ms'), agg('t_ns'), ...cols].join(', '))}
    FROM ${table} WHERE series_id = ${seriesId}`))[0];
  const ms = Float64Array.from(decodeArray(times, 'number') as number[]);
  const sub = Int32Array.from(decodeArray(subs, 'number') as number[]);
  const columns = kinds.map((kind, n) => (kind === undefined ? undefined : columnOfArray(values[n], kind, ms.length)));
  return { ms, sub, columns };
}

/** The field kinds of each measurement of a namespace, by ordinal. */
export async function measurementFields(tx: Db, namespaceId: number): Promise<Map<string, Array<FieldKind | undefined>>> {
  const rows = await tx.all(sql<{ measurement: string; ordinal: number; type: string }>`SELECT measurement, ordinal, type
    FROM telemetry_fields WHERE namespace_id = ${namespaceId}`);
  const out = new Map<string, Array<FieldKind | undefined>>();
  for (const r of rows) {
    let kinds = out.get(r.measurement);
    if (kinds === undefined) out.set(r.measurement, kinds = []);
    kinds[r.ordinal] = FIELD_TYPES.indexOf(r.type as never) as FieldKind;
  }
  return out;
}

export async function storeBlock(tx: Db, seriesId: number, w: DueWindow, block: BlockData): Promise<number> {
  const row = blockRow(block);
  await tx.run(sql`INSERT INTO telemetry_blocks (series_id, start_ms, namespace_id, rows, first_ms, last_ms, stats, data)
    VALUES (${seriesId}, ${w.start_ms}, ${w.namespace_id}, ${row.rows}, ${row.firstMs}, ${row.lastMs}, ${Buffer.from(row.stats)}, ${Buffer.from(row.data)})
    ON CONFLICT (series_id, start_ms) DO UPDATE SET rows = excluded.rows, first_ms = excluded.first_ms, last_ms = excluded.last_ms,
      stats = excluded.stats, data = excluded.data`);
  return row.data.byteLength + row.stats.byteLength;
}
