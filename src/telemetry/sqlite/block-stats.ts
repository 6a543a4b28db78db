// Per-block statistics for aggregate queries: count, sum, min and max of one field of one series in one shard, per
// 1/24th of the shard window (an hour in a 1-day shard). A query with functions reads whole blocks from here and
// scans only the partial blocks at the edges of its range: a 1-day mean of 10 s data reads ~2 partial hours instead
// of 8,640 rows.
//
// Built lazily (the first aggregate over a series' field in a shard scans it once, grouped by block) and kept right by
// the writer: every row it stores marks its (shard, series, block) stale, and a stale block is recomputed from its
// rows when next needed. The cache lives in the catalogue mirror, so a rolled-back write or a schema change elsewhere
// (prune) clears it with everything else.
import type { Statement } from 'better-sqlite3';
import type { FieldInfo, ShardInfo } from '../catalogue-types.ts';
import { FLOAT, INTEGER, UNSIGNED } from '../line-protocol/line-scanner.ts';
import { BLOCKS_PER_SHARD, emptyStats, IntegerOverflow, mergeStats, statsFromRow, type Stats } from '../query/stats.ts';
import { LruCache } from '../../lib/lru-cache.ts';
import { firstAtOrAfter } from '../query/sealed.ts';

/** The SQL reading Stats of column `col` (in the order statsFromRow expects); integers as decimal text (exact). */
export function statsSql(col: string, field: FieldInfo): string {
  const exact = (e: string) => (field.kind === INTEGER || field.kind === UNSIGNED ? `CAST(${e} AS TEXT)` : e);
  return `count(${col}), ${exact(`sum(${col})`)}, ${exact(`min(${col})`)}, ${exact(`max(${col})`)}`;
}

// Bounds the memory: (shard, series, field) entries of 24 blocks each.
const MAX_ENTRIES = 20_000;
// Kept rows of whole blocks (plain-field queries): at most this many rows in all (~100 bytes each), and no block of
// more rows than MAX_BLOCK_ROWS (a block that holds more is read from the table each time).
const MAX_KEPT_ROWS = 200_000;
export const MAX_BLOCK_ROWS = 20_000;

/** What is kept of a block besides its statistics: `size` rows of it, each timed in `ms` (ascending). */
interface KeptBlock {
  ms: Float64Array;
  size: number;
}

/**
 * A block's rows for one set of selected fields and one time format, ascending by time, as the JSON rows of answers
 * (`[<time>,v,...]`), with each row's time in ms (for ranges that cut the block). Rows where none of the fields is set
 * are not there.
 */
export interface RowBlock extends KeptBlock {
  rows: string[];
}

/** A block's values of one float field, ascending by time: the range statistics of an aggregate's edges come from them. */
interface ValueBlock extends KeptBlock {
  values: Float64Array;
}

type Blocks = Array<Stats | undefined>;

interface Entry {
  table: string;
  /** `${table}/${seriesId}`: the key of fieldsOf */
  series: string;
  ordinal: number;
  blocks: Blocks;
}

export class BlockStats {
  /** `${table}/${seriesId}/${ordinal}` -> the field's blocks (undefined: stale); the least recently read go first */
  private readonly entries = new LruCache<string, Entry>(MAX_ENTRIES, (_key, entry) => this.forget(entry));
  /** `${table}/${seriesId}` -> the ordinals with an entry: what a write of that series makes stale */
  private readonly fieldsOf = new Map<string, Set<number>>();
  /** tables with at least one entry, and how many: the writer only marks blocks of these */
  private readonly tables = new Map<string, number>();

  /**
   * `${table}/${seriesId}/${shape}/${block}` -> what is kept of the block for that shape: rows of a set of selected
   * fields (RowBlock), or the values of one float field (ValueBlock, shape `v<ordinal>`)
   */
  private readonly keptBlocks = new LruCache<string, KeptBlock>(MAX_KEPT_ROWS, (key) => this.forgetKept(key), { of: (b) => b.size + 1, max: MAX_KEPT_ROWS });
  /** `${table}/${seriesId}` -> the shapes that have (or had) kept blocks: what a write of that series makes stale */
  private readonly shapesOf = new Map<string, Set<string>>();
  /** tables with kept blocks, and how many */
  private readonly keptTables = new Map<string, number>();
  /** blocks found to hold more than MAX_BLOCK_ROWS rows for a shape: they only grow (points are dropped by whole shards) */
  private readonly oversized = new LruCache<string, true>(10_000);

  /** `statement(sql)`: a prepared, raw statement (the catalogue's cache: statements name shard tables). */
  constructor(private readonly statement: (sql: string) => Statement) {}

  clear(): void {
    this.entries.clear();
    this.fieldsOf.clear();
    this.tables.clear();
    this.keptBlocks.clear();
    this.shapesOf.clear();
    this.keptTables.clear();
    this.oversized.clear();
  }

  private forget(entry: Entry): void {
    const fields = this.fieldsOf.get(entry.series);
    fields?.delete(entry.ordinal);
    if (fields?.size === 0) this.fieldsOf.delete(entry.series);
    const left = (this.tables.get(entry.table) ?? 1) - 1;
    if (left > 0) this.tables.set(entry.table, left);
    else this.tables.delete(entry.table);
  }

  /** Whether any block of this shard table is cached (when not, writes need not mark anything). */
  caches(table: string): boolean {
    return this.tables.has(table) || this.keptTables.has(table);
  }

  /** The writer stored a row of this series at this time: its block is stale (for every field and kept rows). */
  markStale(shard: ShardInfo, seriesId: number, timeMs: number): void {
    const series = `${shard.table}/${seriesId}`;
    const block = blockOf(shard, timeMs);
    const fields = this.fieldsOf.get(series);
    if (fields !== undefined) for (const ordinal of fields) this.entries.peek(`${series}/${ordinal}`)!.blocks[block] = undefined;
    const shapes = this.shapesOf.get(series);
    if (shapes !== undefined) {
      for (const shape of shapes) {
        const key = `${series}/${shape}/${block}`;
        if (this.keptBlocks.delete(key)) this.forgetKept(key);
      }
    }
  }

  /** The kept rows of a whole block for `shape` (a set of selected fields): 'oversized' when it holds too many to keep. */
  keptRows(shard: ShardInfo, seriesId: number, shape: string, block: number): RowBlock | 'oversized' | undefined {
    const key = `${shard.table}/${seriesId}/${shape}/${block}`;
    return this.keptBlocks.get(key) as RowBlock | undefined ?? (this.oversized.has(key) ? 'oversized' : undefined);
  }

  /**
   * Adds count, sum, min and max of a float field over [from, to) (at most two blocks: an aggregate's edge) from the
   * kept values of its blocks, reading and keeping them as needed. False for other kinds of fields (integer sums must
   * stay exact: the caller scans the table) and for blocks too large to keep.
   */
  edgeStats(shard: ShardInfo, seriesId: number, field: FieldInfo, from: number, to: number, into: Stats): boolean {
    if (field.kind !== FLOAT) return false;
    if (field.ordinal >= shard.columns) return true;
    const size = blockMs(shard);
    const blocks: ValueBlock[] = [];
    for (let b = blockOf(shard, from); b <= blockOf(shard, to - 1); b++) {
      const kept = this.values(shard, seriesId, field, b, shard.startMs + b * size);
      if (kept === undefined) return false;
      blocks.push(kept);
    }
    const add: Stats = emptyStats();
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    for (const { ms, values } of blocks) {
      for (let i = firstAtOrAfter(ms, from), end = firstAtOrAfter(ms, to); i < end; i++) {
        const v = values[i];
        sum += v;
        if (v < min) min = v;
        if (v > max) max = v;
        add.count++;
      }
    }
    if (add.count > 0) {
      add.sum = sum;
      add.min = min;
      add.max = max;
      mergeStats(into, add);
    }
    return true;
  }

  private values(shard: ShardInfo, seriesId: number, field: FieldInfo, block: number, start: number): ValueBlock | undefined {
    const shape = `v${field.ordinal}`;
    const key = `${shard.table}/${seriesId}/${shape}/${block}`;
    const kept = this.keptBlocks.get(key) as ValueBlock | undefined;
    if (kept !== undefined) return kept;
    if (this.oversized.has(key)) return undefined;
    const col = `c${field.ordinal}`;
    const rows = this.statement(`SELECT t_ms, ${col} FROM "${shard.table}" WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND ${col} IS NOT NULL
      ORDER BY t_ms, t_ns LIMIT ${MAX_BLOCK_ROWS + 1}`).all(seriesId, start, start + blockMs(shard)) as Array<[number, number]>;
    if (rows.length > MAX_BLOCK_ROWS) {
      this.keep(shard, seriesId, shape, block, 'oversized');
      return undefined;
    }
    const read: ValueBlock = { ms: new Float64Array(rows.length), values: new Float64Array(rows.length), size: rows.length };
    rows.forEach(([t, v], i) => {
      read.ms[i] = t;
      read.values[i] = v;
    });
    this.keep(shard, seriesId, shape, block, read);
    return read;
  }

  /**
   * Keeps the rows of a whole block, read inside the current exclusive section, until a write of the block; or notes
   * that the block holds more than MAX_BLOCK_ROWS rows.
   */
  keep(shard: ShardInfo, seriesId: number, shape: string, block: number, rows: KeptBlock | 'oversized'): void {
    const series = `${shard.table}/${seriesId}`;
    const key = `${series}/${shape}/${block}`;
    if (rows === 'oversized') {
      this.oversized.set(key, true);
      return;
    }
    if (this.keptBlocks.has(key) || rows.size + 1 > MAX_KEPT_ROWS) return;
    let shapes = this.shapesOf.get(series);
    if (shapes === undefined) this.shapesOf.set(series, shapes = new Set());
    shapes.add(shape);
    this.keptTables.set(shard.table, (this.keptTables.get(shard.table) ?? 0) + 1);
    this.keptBlocks.set(key, rows);
  }

  /** A kept block is gone (stale or evicted): its table counts one less. */
  private forgetKept(key: string): void {
    const table = key.slice(0, key.indexOf('/'));
    const left = (this.keptTables.get(table) ?? 1) - 1;
    if (left > 0) this.keptTables.set(table, left);
    else this.keptTables.delete(table);
  }

  /**
   * Stats of blocks [first, last) of a field of a series in a shard, building the entry or recomputing stale blocks
   * as needed. Throws IntegerOverflow when an integer sum does not fit int64 (the caller falls back to scanning).
   */
  read(shard: ShardInfo, seriesId: number, field: FieldInfo, first: number, last: number, into: Stats): void {
    const series = `${shard.table}/${seriesId}`;
    const key = `${series}/${field.ordinal}`;
    let blocks = this.entries.get(key)?.blocks;
    if (blocks === undefined) {
      blocks = this.build(shard, seriesId, field);
      this.entries.set(key, { table: shard.table, series, ordinal: field.ordinal, blocks });
      let fields = this.fieldsOf.get(series);
      if (fields === undefined) this.fieldsOf.set(series, fields = new Set());
      fields.add(field.ordinal);
      this.tables.set(shard.table, (this.tables.get(shard.table) ?? 0) + 1);
    }
    for (let b = first; b < last; b++) {
      let stats = blocks[b];
      if (stats === undefined) blocks[b] = stats = this.scanBlock(shard, seriesId, field, b);
      mergeStats(into, stats);
    }
  }

  /** Every block of the field in one scan, grouped by block. */
  private build(shard: ShardInfo, seriesId: number, field: FieldInfo): Blocks {
    const blocks: Blocks = Array.from({ length: BLOCKS_PER_SHARD }, emptyStats);
    if (field.ordinal >= shard.columns) return blocks;
    const col = `c${field.ordinal}`;
    // Literal integers (bound JavaScript numbers would be REAL, and the division with them)
    const rows = this.run(`SELECT (t_ms - ${shard.startMs}) / ${blockMs(shard)} AS block, ${statsSql(col, field)} FROM "${shard.table}"
      WHERE series_id = ? AND ${col} IS NOT NULL GROUP BY block`, seriesId);
    for (const r of rows) blocks[r[0] as number] = statsFromRow(r, 1, field);
    return blocks;
  }

  private scanBlock(shard: ShardInfo, seriesId: number, field: FieldInfo, block: number): Stats {
    if (field.ordinal >= shard.columns) return emptyStats();
    const from = shard.startMs + block * blockMs(shard);
    const [r] = this.run(`SELECT ${statsSql(`c${field.ordinal}`, field)} FROM "${shard.table}" WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`,
      seriesId, from, from + blockMs(shard));
    return statsFromRow(r, 0, field);
  }

  private run(sql: string, ...params: number[]): unknown[][] {
    try {
      return this.statement(sql).all(...params) as unknown[][];
    } catch (err) {
      if (/integer overflow/i.test((err as Error).message)) throw new IntegerOverflow();
      throw err;
    }
  }
}

export function blockMs(shard: ShardInfo): number {
  return (shard.endMs - shard.startMs) / BLOCKS_PER_SHARD;
}

export function blockOf(shard: ShardInfo, timeMs: number): number {
  return Math.floor((timeMs - shard.startMs) / blockMs(shard));
}
