// Queries with functions (sum, min, max, mean): one row per series, timed at the start of the range. Whole blocks of
// a shard come from the block statistics (block-stats.ts); the partial blocks at the range's edges are scanned.
import type { Catalogue, FieldInfo, ShardInfo } from './catalogue.ts';
import { blockMs, statsSql } from './block-stats.ts';
import { emptyStats, IntegerOverflow, mergeStats, statsFromRow, type Stats } from '../query/stats.ts';
import { FLOAT, INT64_MAX, INT64_MIN } from '../line-protocol/line-scanner.ts';
import { windowStats } from './blocks.ts';
import { columnsKey, isInteger, StatementError, type Column } from '../query/columns.ts';
import { columnIn, statement } from './statements.ts';
import type { PlannedQuery } from '../query/types.ts';
import { aggregateRowJson } from '../query/result.ts';

/** The one row of a query with functions: `["<range start>",agg,...]`; '' when no selected field has a value. */
export function aggregateRow(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): string {
  let stats: Stats[];
  try {
    stats = columns.map(() => emptyStats());
    for (const shard of q.shards) addShard(catalogue, q, shard, seriesId, columns, stats);
  } catch (err) {
    // A block's integer sum does not fit int64: read the range the plain way, which fails only for sum and mean.
    if (!(err instanceof IntegerOverflow)) throw err;
    stats = scanAll(catalogue, q, seriesId, columns);
  }
  // sealed windows sum integers exactly: past int64 is InfluxDB's overflow, as for the rows
  columns.forEach((c, i) => {
    if ((c.fn === 'sum' || c.fn === 'mean') && outOfInt64(stats[i].sum)) throw new StatementError('integer overflow in sum()');
  });
  return aggregateRowJson(q, columns, stats);
}

/**
 * count, sum, min and max of one field of a series over [fromMs, toMs) of the given shards, the way aggregate queries
 * read them (InfluxQL uses it too): whole blocks from the block statistics, the edges scanned. Throws IntegerOverflow
 * when an integer block sum does not fit int64.
 */
export function rangeStats(catalogue: Catalogue, shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats {
  const stats = [emptyStats()];
  const columns: Column[] = [{ field, fn: 'sum', name: 'sum' }];
  for (const shard of shards) addShardRange(catalogue, fromMs, toMs, shard, seriesId, columns, stats);
  if (outOfInt64(stats[0].sum)) throw new IntegerOverflow();
  return stats[0];
}

function outOfInt64(sum: number | bigint): boolean {
  return typeof sum === 'bigint' && (sum > INT64_MAX || sum < INT64_MIN);
}

/** Adds the part of [fromMs, toMs) inside one shard: whole blocks from the block statistics, the edges scanned. */
function addShard(catalogue: Catalogue, q: PlannedQuery, shard: ShardInfo, seriesId: number, columns: Column[], stats: Stats[]): void {
  addShardRange(catalogue, q.fromMs, q.toMs, shard, seriesId, columns, stats);
}

function addShardRange(catalogue: Catalogue, fromMs: number, toMs: number, shard: ShardInfo, seriesId: number, columns: Column[], stats: Stats[]): void {
  const from = Math.max(fromMs, shard.startMs);
  const to = Math.min(toMs, shard.endMs);
  if (from >= to) return;
  if (shard.sealed) {
    columns.forEach((c, i) => mergeStats(stats[i], windowStats(catalogue, shard, seriesId, c.field, from, to)));
    return;
  }
  const size = blockMs(shard);
  const first = Math.ceil((from - shard.startMs) / size);
  const last = Math.floor((to - shard.startMs) / size);
  if (first >= last) {
    edgeRange(catalogue, shard, seriesId, from, to, columns, stats);
    return;
  }
  const firstStart = shard.startMs + first * size;
  const lastEnd = shard.startMs + last * size;
  if (from < firstStart) edgeRange(catalogue, shard, seriesId, from, firstStart, columns, stats);
  columns.forEach((c, i) => catalogue.blockStats.read(shard, seriesId, c.field, first, last, stats[i]));
  if (lastEnd < to) edgeRange(catalogue, shard, seriesId, lastEnd, to, columns, stats);
}

/** Adds a range of at most two partial blocks: float fields from their blocks' kept values, the others scanned. */
function edgeRange(catalogue: Catalogue, shard: ShardInfo, seriesId: number, from: number, to: number, columns: Column[], stats: Stats[]): void {
  const rest = columns.flatMap((c, i) => (catalogue.blockStats.edgeStats(shard, seriesId, c.field, from, to, stats[i]) ? [] : [i]));
  if (rest.length > 0) scanRange(catalogue, shard, seriesId, from, to, rest.map((i) => columns[i]), rest.map((i) => stats[i]));
}

/** Scans [from, to) of one shard for every column. */
function scanRange(catalogue: Catalogue, shard: ShardInfo, seriesId: number, from: number, to: number, columns: Column[], stats: Stats[]): void {
  const shape = columnsKey(columns);
  const stmt = statement(catalogue, `${shard.table}/${shard.columns}/s${shape}`, () => {
    const exprs = columns.map((c) => statsSql(columnIn(shard, c.field) ?? 'NULL', c.field));
    return `SELECT ${exprs.join(', ')} FROM "${shard.table}" WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`;
  });
  let r: unknown[];
  try {
    r = stmt.get(seriesId, from, to) as unknown[];
  } catch (err) {
    if (/integer overflow/i.test((err as Error).message)) throw new IntegerOverflow();
    throw err;
  }
  columns.forEach((c, i) => mergeStats(stats[i], statsFromRow(r, i * 4, c.field)));
}

/**
 * The plain way: one statement over every shard computing only what each function needs (a min or max never sums,
 * so only a sum or mean can overflow), partial aggregates per shard combined here.
 */
function scanAll(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): Stats[] {
  const stats = columns.map(() => emptyStats());
  for (const shard of q.shards) {
    if (shard.sealed) columns.forEach((c, i) => mergeStats(stats[i], windowStats(catalogue, shard, seriesId, c.field, q.fromMs, q.toMs)));
  }
  const heads = q.shards.filter((s) => !s.sealed);
  if (heads.length === 0) return stats;
  const shape = `a${columnsKey(columns)}`;
  const key = `${heads.map((s) => `${s.table}/${s.columns}`).join('+')}/${shape}`;
  const stmt = statement(catalogue, key, () => heads.map((shard) => {
    const exprs = columns.map((c) => {
      const col = columnIn(shard, c.field) ?? 'NULL';
      const value = c.fn === 'min' ? `min(${col})` : c.fn === 'max' ? `max(${col})` : `sum(${col})`;
      return `count(${col}), ${isInteger(c.field) ? `CAST(${value} AS TEXT)` : value}`;
    });
    return `SELECT ${exprs.join(', ')} FROM "${shard.table}" WHERE series_id = @series AND t_ms >= @from AND t_ms < @to`;
  }).join(' UNION ALL '));
  let partials: unknown[][];
  try {
    partials = stmt.all({ series: seriesId, from: q.fromMs, to: q.toMs }) as unknown[][];
  } catch (err) {
    if (/integer overflow/i.test((err as Error).message)) throw new StatementError('integer overflow in sum()');
    throw err;
  }
  for (const r of partials) {
    columns.forEach((c, i) => {
      const count = r[i * 2] as number;
      if (count === 0) return;
      const value = isInteger(c.field) ? BigInt(r[i * 2 + 1] as string) : r[i * 2 + 1] as number;
      const part: Stats = { count, sum: c.fn === 'sum' || c.fn === 'mean' ? value : 0, min: value, max: value };
      mergeStats(stats[i], part);
    });
  }
  return stats;
}
