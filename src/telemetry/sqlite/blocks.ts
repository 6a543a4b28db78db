// Reading sealed windows on SQLite (docs/api.md#telemetry-blocks): a series' block of a window, its statistics, and its
// points merged with any head rows the window's shard table still holds for the series (late points, the later
// write winning field by field). The readers (points.ts, rows.ts, aggregate.ts) take this path for sealed windows and
// their usual SQL for the others.
import type { Catalogue, FieldInfo, ShardInfo } from './catalogue.ts';
import type { SealedBlockEntry } from '../catalogue-types.ts';
import { decodeStats, withColumns, type BlockData } from '../blocks/index.ts';
import { columnIn } from './statements.ts';
import type { Stats } from '../query/stats.ts';
import { headValue, mergePoints, pointsOfBlock, statsOfBlock, statsOfValues, type EdgeTake, type WindowPoints } from '../query/sealed.ts';

export type { SealedValue, WindowPoints } from '../query/sealed.ts';

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

function decoded(catalogue: Catalogue, shard: ShardInfo, seriesId: number, block: SealedBlockEntry, fields: readonly FieldInfo[]): BlockData {
  const prior = block.decoded;
  if (prior !== undefined && fields.every((f) => prior.columns[f.ordinal] !== undefined || block.stats[f.ordinal] === undefined)) return prior;
  const [data] = catalogue.statement('blocks/data', () => 'SELECT data FROM telemetry_blocks WHERE series_id = ? AND start_ms = ?', true)
    .get(seriesId, shard.startMs) as [Uint8Array];
  // only the columns asked for are decoded (and kept); a later read of other fields adds theirs
  const kept: SealedBlockEntry = { ...block, decoded: withColumns(data, prior, fields.map((f) => f.ordinal)) };
  // entries are replaced, never changed: the cache weighs an entry when it is set and again when it goes
  catalogue.sealedBlocks.set(`${seriesId}/${shard.startMs}`, kept);
  return kept.decoded!;
}

/**
 * The series' decoded block of a sealed window when the block alone holds the window's points; null when the window
 * has neither block nor head rows of the series; undefined when head rows are pending (read merged points instead).
 */
export function blockAlone(catalogue: Catalogue, shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[]): BlockData | null | undefined {
  if (hasHeadRows(catalogue, shard, seriesId)) return undefined;
  const block = sealedBlock(catalogue, shard, seriesId);
  return block === null ? null : decoded(catalogue, shard, seriesId, block, fields);
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
export function windowPoints(catalogue: Catalogue, shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number,
  edge?: EdgeTake): WindowPoints {
  const block = sealedBlock(catalogue, shard, seriesId);
  // with an edge, head rows may add points anywhere: the sealed ones past `limit` from that end cannot be among the first
  const sealed = block === null ? undefined : pointsOfBlock(decoded(catalogue, shard, seriesId, block, fields), fields, fromMs, toMs, edge);
  const head = hasHeadRows(catalogue, shard, seriesId) ? headPoints(catalogue, shard, seriesId, fields, fromMs, toMs) : undefined;
  if (head === undefined) return sealed ?? { ms: [], sub: [], values: fields.map(() => []) };
  if (sealed === undefined) return head;
  return mergePoints(sealed, head);
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

/**
 * count, sum, min and max of a numeric field in a sealed window over [fromMs, toMs): the block's own statistics when
 * the range holds the whole window and no head row of the series is pending, else computed from the points.
 */
export function windowStats(catalogue: Catalogue, shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats {
  if (fromMs <= shard.startMs && toMs >= shard.endMs && !hasHeadRows(catalogue, shard, seriesId)) {
    return statsOfBlock(sealedBlock(catalogue, shard, seriesId), field);
  }
  return statsOfValues(field, windowPoints(catalogue, shard, seriesId, [field], fromMs, toMs).values[0]);
}

