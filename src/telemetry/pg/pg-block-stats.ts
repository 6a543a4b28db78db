// Block statistics on PostgreSQL (the tables: sql/pg/0014_telemetry_block_stats.sql): count, sum, min and max of one
// column of one series over one block of its shard (1/24th of the window, as on SQLite: block-stats.ts), kept in the
// database because any node may write. A read over a range asks for its whole blocks and scans only its edges: the
// stored statistics of a block whose mark still has the version they were computed under, the rows of any other block
// (whose statistics the read then stores, storeBlockStats, after its snapshot). A 1-day mean of 10 s data reads ~24
// rows of statistics and two partial hours instead of ~8,600 rows.
import { sql } from 'kysely';
import type { Db } from '../../db/open.ts';
import type { ShardInfo } from '../catalogue-types.ts';
import { BLOCKS_PER_SHARD } from '../query/stats.ts';
import { arrayParam } from './pg-shards.ts';

/** A piece of a range within one shard: a whole block (block >= 0) or an edge (block -1), over [lo, hi). */
export interface Piece {
  block: number;
  lo: number;
  hi: number;
}

/**
 * The first time of block b of a shard (b = BLOCKS_PER_SHARD: the window's end). A time t is in block
 * floor(BLOCKS_PER_SHARD * (t - start) / (end - start)), in integers, as a fold marks blocks (the trigger of
 * sql/pg/0014_telemetry_block_stats.sql).
 */
export function blockStart(shard: ShardInfo, b: number): number {
  return shard.startMs + Math.ceil((b * (shard.endMs - shard.startMs)) / BLOCKS_PER_SHARD);
}

/**
 * The pieces of [fromMs, toMs) within a shard, in time order: its edges and the whole blocks between them (the whole
 * range as one edge when it holds no whole block).
 */
export function rangePieces(shard: ShardInfo, fromMs: number, toMs: number): Piece[] {
  const lo = Math.max(fromMs, shard.startMs);
  const hi = Math.min(toMs, shard.endMs);
  const whole: Piece[] = [];
  for (let b = 0; b < BLOCKS_PER_SHARD; b++) {
    const start = blockStart(shard, b);
    const end = blockStart(shard, b + 1);
    if (start >= lo && end <= hi && start < end) whole.push({ block: b, lo: start, hi: end });
  }
  if (whole.length === 0) return lo < hi ? [{ block: -1, lo, hi }] : [];
  const pieces: Piece[] = [];
  if (lo < whole[0].lo) pieces.push({ block: -1, lo, hi: whole[0].lo });
  pieces.push(...whole);
  const last = whole[whole.length - 1].hi;
  if (last < hi) pieces.push({ block: -1, lo: last, hi });
  return pieces;
}

/** A piece's statistics as read: integers (count aside) as decimal text, floats as numbers. */
export interface PieceRow {
  /** the column's place in the columns asked for */
  ci: number;
  /** the group's place in its column's groups */
  grp: number;
  sid: number;
  /** the piece's place (1-based) in its group's pieces */
  k: number;
  /** the block's version in the read's snapshot (decimal text); null for an edge */
  version: string | null;
  /** read from telemetry_block_stats (else scanned) */
  stored: boolean;
  n: number;
  total: number | string | null;
  low: number | string | null;
  high: number | string | null;
}

/** The series of one shard whose statistics a read asks for, over the same pieces. */
export interface PieceGroup {
  shard: ShardInfo;
  pieces: readonly Piece[];
  ids: readonly number[];
}

/** A column (c<n>f or c<n>i) and the groups whose statistics of it a read asks for. */
export interface ColumnPieces {
  col: string;
  groups: readonly PieceGroup[];
}

/**
 * count, sum, min and max of each column (c<n>f or c<n>i) of its groups' series over each of their pieces, every column
 * and shard in one round trip (a range over 30 days: one, not 30; a mean of three fields: one, not three): a whole
 * block's from telemetry_block_stats while they hold, every other piece from the shard table's rows. The function
 * telemetry_piece_stats (sql/pg/0015_telemetry_piece_stats.sql) does it, once per column: this statement's text
 * depends only on the number of columns, so it is sent as a named prepared statement (prepared.ts) and the function's
 * lookup of statistics keeps its plan; only the scans of the shard tables are planned each time.
 */
export async function readPieces(tx: Db, columns: readonly ColumnPieces[]): Promise<PieceRow[]> {
  const calls = columns.map(({ col, groups }, ci) => {
    const sgrp: number[] = [];
    const sids: number[] = [];
    const pgrp: number[] = [];
    const ks: number[] = [];
    const blocks: number[] = [];
    const los: number[] = [];
    const his: number[] = [];
    groups.forEach(({ pieces, ids }, at) => {
      for (const id of ids) {
        sgrp.push(at);
        sids.push(id);
      }
      pieces.forEach((p, j) => {
        pgrp.push(at);
        ks.push(j + 1);
        blocks.push(p.block);
        los.push(p.lo);
        his.push(p.hi);
      });
    });
    return sql`SELECT ${sql.raw(String(ci))} AS ci, grp, sid, k, version, stored, n, total, low, high
    FROM telemetry_piece_stats(${col}, ${groups.map((g) => g.shard.table)}::text[], ${sgrp}::integer[], ${sids}::bigint[],
      ${pgrp}::integer[], ${ks}::integer[], ${blocks}::integer[], ${los}::bigint[], ${his}::bigint[])`;
  });
  type Row = Omit<PieceRow, 'total' | 'low' | 'high'> & { total: string | null; low: string | null; high: string | null };
  const rows = await tx.all(sql<Row>`${sql.join(calls, sql` UNION ALL `)}`);
  // a float's shortest exact text, read back to the same double
  const float = (v: string | null) => (v === null ? null : Number(v));
  return rows.map((r) => (columns[r.ci].col.endsWith('i') ? r : { ...r, total: float(r.total), low: float(r.low), high: float(r.high) }));
}

/** A block's statistics computed by a read, to be stored under the version its snapshot saw. */
export interface ComputedBlock {
  table: string;
  col: string;
  sid: number;
  block: number;
  version: string;
  n: number;
  total: number | string | null;
  low: number | string | null;
  high: number | string | null;
}

/**
 * Stores the statistics reads computed, each only while its block's mark still has the version the read saw (a fold
 * committed since gave it another: what was computed may miss its points). In key order, each key once, so that two
 * nodes storing at once never wait on each other in a circle. Any failure (a table dropped meanwhile, the server
 * gone) only leaves them unstored: the next read computes them again.
 */
export async function storeBlockStats(db: Db, blocks: readonly ComputedBlock[]): Promise<void> {
  const byKey = new Map<string, ComputedBlock>();
  for (const b of blocks) byKey.set(`${b.table}\u0000${b.sid}\u0000${b.col}\u0000${b.block}`, b);
  const list = [...byKey.values()].sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : a.sid - b.sid
    || (a.col < b.col ? -1 : a.col > b.col ? 1 : a.block - b.block)));
  if (list.length === 0) return;
  const of = (int: boolean, get: (b: ComputedBlock) => number | string | null) => list.map((b) => (b.col.endsWith('i') === int ? get(b) : null));
  try {
    // what is stored acknowledges nothing: lost in a crash, it is computed again (no wait for the WAL's flush)
    await db.tx(async (tx) => {
      await tx.script('SET LOCAL synchronous_commit = off');
      await tx.run(sql`INSERT INTO telemetry_block_stats AS st (table_name, series_id, col, block, version, n, sum_f, min_f, max_f, sum_i, min_i, max_i)
      SELECT v.t, v.sid, v.col, v.block, v.version, v.n, v.sum_f, v.min_f, v.max_f, v.sum_i, v.min_i, v.max_i
      FROM unnest(${list.map((b) => b.table)}::text[], ${list.map((b) => b.sid)}::bigint[], ${list.map((b) => b.col)}::text[],
        ${list.map((b) => b.block)}::integer[], ${list.map((b) => b.version)}::bigint[], ${list.map((b) => b.n)}::bigint[],
        ${arrayParam(of(false, (b) => b.total), 'double precision')}::float8[], ${arrayParam(of(false, (b) => b.low), 'double precision')}::float8[],
        ${arrayParam(of(false, (b) => b.high), 'double precision')}::float8[], ${arrayParam(of(true, (b) => b.total), 'text')}::numeric[],
        ${arrayParam(of(true, (b) => b.low), 'text')}::bigint[], ${arrayParam(of(true, (b) => b.high), 'text')}::bigint[])
        AS v(t, sid, col, block, version, n, sum_f, min_f, max_f, sum_i, min_i, max_i)
      JOIN telemetry_block_marks AS m ON m.table_name = v.t AND m.block = v.block AND m.version = v.version
      ON CONFLICT (table_name, series_id, col, block) DO UPDATE SET version = EXCLUDED.version, n = EXCLUDED.n,
        sum_f = EXCLUDED.sum_f, min_f = EXCLUDED.min_f, max_f = EXCLUDED.max_f,
        sum_i = EXCLUDED.sum_i, min_i = EXCLUDED.min_i, max_i = EXCLUDED.max_i`);
    });
  } catch {
    // the answer they came with is complete without them (test/telemetry/pg-block-stats.test.ts proves they are stored)
  }
}
