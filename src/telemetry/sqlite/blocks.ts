// Reading sealed windows on SQLite (docs/api.md#telemetry-blocks): a series' block of a window, its statistics, and its
// points merged with any head rows the window's shard table still holds for the series (late points, the later
// write winning field by field). The readers (points.ts, rows.ts, aggregate.ts) take this path for sealed windows and
// their usual SQL for the others.
import type { Catalogue, FieldInfo, ShardInfo } from './catalogue.ts';
import type { SealedBlockEntry } from '../catalogue-types.ts';
import { decodeBlock, decodeStats, valuesOfColumn, type BlockData } from '../blocks/index.ts';
import { BOOLEAN, FLOAT, STRING } from '../line-protocol/line-scanner.ts';
import { columnIn } from './statements.ts';
import type { Stats } from '../query/stats.ts';

/** A cell as the sealed readers carry it: integers exact (bigint beyond 2^53), booleans as booleans. */
export type SealedValue = number | bigint | string | boolean | null;

/** A series' points of some fields in a window: times ascending, one value array per field. */
export interface WindowPoints {
  ms: number[];
  sub: number[];
  values: SealedValue[][];
}

/** The block of a series in a window, read once per mirror generation (kept in the catalogue's block cache). */
export function sealedBlock(catalogue: Catalogue, shard: ShardInfo, seriesId: number): SealedBlockEntry | null {
  const key = `${seriesId}/${shard.startMs}`;
  const cache = catalogue.sealedBlocks;
  const kept = cache.get(key);
  if (kept !== undefined) return kept;
  const row = catalogue.statement('blocks/stats', () => 'SELECT rows, stats FROM telemetry_blocks WHERE series_id = ? AND start_ms = ?', true)
    .get(seriesId, shard.startMs) as [number, Uint8Array] | undefined;
  const block = row === undefined ? null : { rows: row[0], stats: decodeStats(row[1]), decoded: undefined };
  cache.set(key, block);
  return block;
}

function decoded(catalogue: Catalogue, shard: ShardInfo, seriesId: number, block: SealedBlockEntry): BlockData {
  if (block.decoded !== undefined) return block.decoded;
  const [data] = catalogue.statement('blocks/data', () => 'SELECT data FROM telemetry_blocks WHERE series_id = ? AND start_ms = ?', true)
    .get(seriesId, shard.startMs) as [Uint8Array];
  const kept: SealedBlockEntry = { ...block, decoded: decodeBlock(data) };
  // entries are replaced, never changed: the cache weighs an entry when it is set and again when it goes
  catalogue.sealedBlocks.set(`${seriesId}/${shard.startMs}`, kept);
  return kept.decoded!;
}

/** Whether the window's shard table holds rows of the series (late points not sealed yet). */
export function hasHeadRows(catalogue: Catalogue, shard: ShardInfo, seriesId: number): boolean {
  if (!shard.head) return false;
  return catalogue.statement(`${shard.table}/any`, () => `SELECT 1 FROM "${shard.table}" WHERE series_id = ? LIMIT 1`, true).get(seriesId) !== undefined;
}

/**
 * The series' points of `fields` in a sealed window over [fromMs, toMs) with at least one of the fields set: its block
 * merged with the window's head rows, which win field by field at a time both hold.
 */
export function windowPoints(catalogue: Catalogue, shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number): WindowPoints {
  const block = sealedBlock(catalogue, shard, seriesId);
  const sealed = block === null ? undefined : pointsOfBlock(decoded(catalogue, shard, seriesId, block), fields, fromMs, toMs);
  const head = hasHeadRows(catalogue, shard, seriesId) ? headPoints(catalogue, shard, seriesId, fields, fromMs, toMs) : undefined;
  if (head === undefined) return sealed ?? { ms: [], sub: [], values: fields.map(() => []) };
  if (sealed === undefined) return head;
  return mergePoints(sealed, head);
}

function pointsOfBlock(block: BlockData, fields: readonly FieldInfo[], fromMs: number, toMs: number): WindowPoints {
  const n = block.ms.length;
  const columns = fields.map((f) => {
    const c = block.columns[f.ordinal];
    return c === undefined || c.kind !== f.kind ? undefined : valuesOfColumn(c, n);
  });
  const out: WindowPoints = { ms: [], sub: [], values: fields.map(() => []) };
  let i = firstAtOrAfter(block.ms, fromMs);
  for (; i < n && block.ms[i] < toMs; i++) {
    let any = false;
    for (const c of columns) if (c !== undefined && c[i] !== null) { any = true; break; }
    if (!any) continue;
    out.ms.push(block.ms[i]);
    out.sub.push(block.sub[i]);
    for (let k = 0; k < columns.length; k++) out.values[k].push(columns[k]?.[i] ?? null);
  }
  return out;
}

/** The head rows of a series in a window, typed (integers exact). */
function headPoints(catalogue: Catalogue, shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number): WindowPoints {
  const cols = fields.map((f) => columnIn(shard, f));
  const present = [...new Set(cols.filter((c): c is string => c !== undefined))];
  const out: WindowPoints = { ms: [], sub: [], values: fields.map(() => []) };
  if (present.length === 0) return out;
  const key = `${shard.table}/${shard.columns}/h${fields.map((f) => f.ordinal).join(',')}`;
  const stmt = catalogue.statement(key, () => `SELECT t_ms, t_ns, ${cols.map((c) => c ?? 'NULL').join(', ')} FROM "${shard.table}"
    WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND (${present.map((c) => `${c} IS NOT NULL`).join(' OR ')}) ORDER BY t_ms, t_ns`, true);
  for (const r of stmt.safeIntegers(true).all(seriesId, fromMs, toMs) as unknown[][]) {
    out.ms.push(Number(r[0]));
    out.sub.push(Number(r[1]));
    fields.forEach((f, k) => out.values[k].push(headValue(f, r[k + 2])));
  }
  return out;
}

function headValue(field: FieldInfo, v: unknown): SealedValue {
  if (v === null || v === undefined) return null;
  if (field.kind === BOOLEAN) return v === 1n || v === 1;
  if (field.kind === FLOAT) return Number(v);
  if (field.kind === STRING) return v as string;
  const big = v as bigint;
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

/** Sealed points with later head points merged in (the head's values win field by field). */
function mergePoints(sealed: WindowPoints, head: WindowPoints): WindowPoints {
  const out: WindowPoints = { ms: [], sub: [], values: sealed.values.map(() => []) };
  let i = 0;
  let j = 0;
  while (i < sealed.ms.length || j < head.ms.length) {
    const order = i >= sealed.ms.length ? 1 : j >= head.ms.length ? -1 : (sealed.ms[i] - head.ms[j]) || (sealed.sub[i] - head.sub[j]);
    if (order < 0) {
      out.ms.push(sealed.ms[i]); out.sub.push(sealed.sub[i]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(sealed.values[k][i]);
      i++;
    } else if (order > 0) {
      out.ms.push(head.ms[j]); out.sub.push(head.sub[j]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(head.values[k][j]);
      j++;
    } else {
      out.ms.push(head.ms[j]); out.sub.push(head.sub[j]);
      for (let k = 0; k < out.values.length; k++) out.values[k].push(head.values[k][j] ?? sealed.values[k][i]);
      i++;
      j++;
    }
  }
  return out;
}

/**
 * count, sum, min and max of a numeric field in a sealed window over [fromMs, toMs): the block's own statistics when
 * the range holds the whole window and no head row of the series is pending, else computed from the points.
 */
export function windowStats(catalogue: Catalogue, shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats {
  if (fromMs <= shard.startMs && toMs >= shard.endMs && !hasHeadRows(catalogue, shard, seriesId)) {
    const s = sealedBlock(catalogue, shard, seriesId)?.stats[field.ordinal];
    if (s === undefined || s.count === 0 || s.sum === undefined) return { count: 0, sum: 0, min: undefined, max: undefined };
    const exact = (v: number | bigint | undefined) => (field.kind === FLOAT || v === undefined ? v : BigInt(v));
    return { count: s.count, sum: exact(s.sum)!, min: exact(s.min), max: exact(s.max) };
  }
  return statsOfValues(field, windowPoints(catalogue, shard, seriesId, [field], fromMs, toMs).values[0]);
}

/** Stats of one field's values in time order (nulls skipped): float sums in that order, integer sums exact. */
export function statsOfValues(field: FieldInfo, values: readonly SealedValue[]): Stats {
  let count = 0;
  let min: number | bigint | undefined;
  let max: number | bigint | undefined;
  if (field.kind === FLOAT) {
    let sum = 0;
    for (const v of values) {
      if (v === null) continue;
      const x = v as number;
      count++;
      sum += x;
      if (min === undefined || x < (min as number)) min = x;
      if (max === undefined || x > (max as number)) max = x;
    }
    return { count, sum, min, max };
  }
  let sum = 0n;
  for (const v of values) {
    if (v === null) continue;
    const x = typeof v === 'bigint' ? v : BigInt(v as number);
    count++;
    sum += x;
    if (min === undefined || x < (min as bigint)) min = x;
    if (max === undefined || x > (max as bigint)) max = x;
  }
  return { count, sum, min, max };
}

/** The index of the first time >= t in ascending times. */
function firstAtOrAfter(times: Float64Array, t: number): number {
  let a = 0;
  let b = times.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (times[mid] < t) a = mid + 1;
    else b = mid;
  }
  return a;
}
