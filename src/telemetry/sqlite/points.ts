// The telemetry query layer's point reader for InfluxQL (src/influxql/): every series of a measurement, and a series'
// points of some fields over [fromMs, toMs) read from the same shard tables (and the same statement cache) as the
// JSON queries. Values come back typed: floats and integers as numbers, booleans as booleans, strings as strings.
import type { SqliteConnection } from '../../db/open.ts';
import type { Catalogue, FieldInfo, NamespaceInfo, ShardInfo } from './catalogue.ts';
import { BOOLEAN } from '../line-protocol/line-scanner.ts';
import { blockAlone, windowPoints, windowStats } from './blocks.ts';
import { addBlockWindows, addPointWindows, addWindow, appendPoints, windowOf } from '../query/sealed.ts';
import { IntegerOverflow } from '../query/stats.ts';
import { isInteger } from '../query/columns.ts';
import { columnIn, LITERAL_LIMITS, statement } from './statements.ts';
import { jsonColumn } from './rows.ts';

import type { SeriesPoints, SeriesRef, WindowAcc } from '../query/reads-types.ts';
import { bySeriesKey } from '../query/series-key.ts';

/** Every series of a measurement, in series-key order (tags by key, a prefix first). Inside an exclusive section. */
export function seriesOfMeasurement(conn: SqliteConnection, ns: NamespaceInfo, measurement: string): SeriesRef[] {
  const rows = conn.prepare('SELECT id, node_id, tags FROM telemetry_series WHERE namespace_id = ? AND measurement = ?')
    .raw(true).all(ns.id, measurement) as Array<[number, string, string]>;
  return bySeriesKey(measurement, rows);
}

/**
 * The series' points with at least one of `fields` set, over [fromMs, toMs), from the given shards (oldest first), in
 * time order. With `edge`, only the first (or, `desc`, the last) `limit` of them are read: shards are visited from
 * that end and each statement stops at the limit.
 */
export function readPoints(catalogue: Catalogue, shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number,
  edge?: { desc: boolean; limit: number }): SeriesPoints {
  const out: SeriesPoints = { ms: [], sub: [], values: fields.map(() => []) };
  if (fields.length === 0) return out;
  const desc = edge?.desc === true;
  const order = desc ? [...shards].reverse() : shards;
  for (const shard of order) {
    if (shard.endMs <= fromMs || shard.startMs >= toMs) continue;
    const left = edge === undefined ? undefined : edge.limit - out.ms.length;
    if (left !== undefined && left <= 0) break;
    if (shard.sealed) {
      appendPoints(out, windowPoints(catalogue, shard, seriesId, fields, fromMs, toMs, left === undefined ? undefined : { desc, limit: left }), desc, left);
      continue;
    }
    const cols = fields.map((f) => columnIn(shard, f));
    const present = [...new Set(cols.filter((c): c is string => c !== undefined))];
    if (present.length === 0) continue;
    const dir = desc ? 'DESC' : 'ASC';
    const literal = left !== undefined && left <= LITERAL_LIMITS ? Math.trunc(left) : undefined;
    const limit = left === undefined ? '' : ` LIMIT ${literal ?? '?'}`;
    const key = `${shard.table}/${shard.columns}/p${fields.map((f) => f.ordinal).join(',')}${edge ? `/${dir}${literal ?? ''}` : ''}`;
    const stmt = statement(catalogue, key, () => `SELECT t_ms, t_ns, ${cols.map((c) => c ?? 'NULL').join(', ')} FROM "${shard.table}"
      WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND (${present.map((c) => `${c} IS NOT NULL`).join(' OR ')}) ORDER BY t_ms ${dir}, t_ns ${dir}${limit}`);
    const rows = (left === undefined || literal !== undefined ? stmt.all(seriesId, fromMs, toMs) : stmt.all(seriesId, fromMs, toMs, left)) as unknown[][];
    for (const r of rows) {
      out.ms.push(r[0] as number);
      out.sub.push(r[1] as number);
      for (let i = 0; i < fields.length; i++) {
        const v = r[i + 2] as number | string | bigint | null;
        out.values[i].push(v === null ? null : fields[i].kind === BOOLEAN ? v === 1 || v === 1n : typeof v === 'bigint' ? Number(v) : v);
      }
    }
  }
  if (desc) {
    out.ms.reverse();
    out.sub.reverse();
    for (const v of out.values) v.reverse();
  }
  return out;
}

/**
 * count, sum, min and max of a numeric field per window of `intervalMs` starting at `firstMs` (intervalMs 0: one
 * window) over [fromMs, toMs), added into the arrays of `acc` by window (see WindowAcc). Head shards are reduced by
 * SQLite (the window number is CAST: bound JavaScript numbers may arrive as REAL, and REAL division does not
 * truncate); sealed windows from their block statistics when one interval holds the whole window, else from the
 * decoded block.
 */
export function addWindowStats(catalogue: Catalogue, shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number,
  firstMs: number, intervalMs: number, acc: WindowAcc): void {
  for (const shard of shards) {
    if (shard.endMs <= fromMs || shard.startMs >= toMs) continue;
    if (shard.sealed) {
      addSealedWindowStats(catalogue, shard, seriesId, field, fromMs, toMs, firstMs, intervalMs, acc);
      continue;
    }
    const col = columnIn(shard, field);
    if (col === undefined) continue;
    const key = `${shard.table}/${shard.columns}/w${field.ordinal}:${field.kind}`;
    const stmt = statement(catalogue, key, () => `SELECT CAST((t_ms - @first) / @interval AS INTEGER), count(${col}), sum(${col}), min(${col}), max(${col})
      FROM "${shard.table}" WHERE series_id = @series AND t_ms >= @from AND t_ms < @to AND ${col} IS NOT NULL GROUP BY 1`);
    const args = { first: firstMs, interval: intervalMs === 0 ? Number.MAX_SAFE_INTEGER : intervalMs, series: seriesId,
      from: Math.max(fromMs, shard.startMs), to: Math.min(toMs, shard.endMs) };
    let rows: unknown[][];
    try {
      rows = stmt.safeIntegers(isInteger(field)).all(args) as unknown[][];
    } catch (err) {
      if (/integer overflow/i.test((err as Error).message)) throw new IntegerOverflow();
      throw err;
    } finally {
      stmt.safeIntegers(false);
    }
    for (const [w, n, total, lo, hi] of rows) addWindow(acc, Number(w), Number(n), total as number | bigint, lo as number | bigint, hi as number | bigint);
  }
}

/**
 * addWindowStats for a sealed window: from the block's statistics when the whole window falls in one interval of the
 * range and no head row of the series is pending, else from the decoded block (or its points merged with head rows).
 */
function addSealedWindowStats(catalogue: Catalogue, shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number,
  firstMs: number, intervalMs: number, acc: WindowAcc): void {
  const lo = Math.max(fromMs, shard.startMs);
  const hi = Math.min(toMs, shard.endMs);
  if (lo === shard.startMs && hi === shard.endMs && windowOf(lo, firstMs, intervalMs) === windowOf(hi - 1, firstMs, intervalMs)) {
    const s = windowStats(catalogue, shard, seriesId, field, lo, hi);
    if (s.count > 0) addWindow(acc, windowOf(lo, firstMs, intervalMs), s.count, s.sum, s.min!, s.max!);
    return;
  }
  const alone = blockAlone(catalogue, shard, seriesId, [field]);
  if (alone === null) return;
  if (alone !== undefined && addBlockWindows(alone, field, lo, hi, firstMs, intervalMs, acc)) return;
  addPointWindows(windowPoints(catalogue, shard, seriesId, [field], lo, hi), field, firstMs, intervalMs, acc);
}
