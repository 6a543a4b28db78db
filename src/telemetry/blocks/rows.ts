// Blocks from the rows of a shard table, and a block with later points merged in: what sealing does on either backend
// (sqlite/seal.ts, pg/pg-seal.ts), pure.
import { BOOLEAN, FLOAT, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import { encodeBlock, type BlockData } from './block.ts';
import type { Column } from './column.ts';
import { columnStats, encodeStats, type FieldStats } from './stats.ts';
import { columnFromValues, valuesOfColumn } from './values.ts';

/** A window may be sealed once this share of its duration has passed after its end (an hour for a 1-day window). */
export const GRACE_DIVISOR = 24;

/** One sealing transaction's work. */
export interface SealStep {
  namespaceId: number;
  window: number;
  table: string;
  /** series sealed by this step, and their points (head rows) */
  series: number;
  points: number;
  /** bytes of the blocks written */
  bytes: number;
  /** the window's shard table is gone: every point of the window is in its blocks */
  done: boolean;
}

/** Shard-table rows (series_id, t_ms, t_ns, c0 .. c<width - 1>, integers as bigint) of one series as a block. */
export function blockFromRows(rows: readonly unknown[][], width: number, kinds: ReadonlyArray<FieldKind | undefined>): BlockData {
  const n = rows.length;
  const ms = new Float64Array(n);
  const sub = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    ms[i] = Number(rows[i][1] as bigint);
    sub[i] = Number(rows[i][2] as bigint);
  }
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < width; c++) {
    const kind = kinds[c];
    if (kind === undefined) continue;
    columns[c] = columnFromValues(kind, rows.map((r) => cellValue(r[3 + c], kind)));
  }
  return { ms, sub, columns };
}

/** A stored cell as the value of its field's kind (integers stay bigint; booleans are stored 0/1). */
function cellValue(v: unknown, kind: FieldKind): number | bigint | string | boolean | null {
  if (v === null || v === undefined) return null;
  if (kind === BOOLEAN) return v === 1n || v === 1;
  if (kind === FLOAT) return typeof v === 'bigint' ? Number(v) : v as number;
  if (kind === STRING) return v as string;
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

/**
 * A block with later points merged in: at a time both hold, `later`'s values replace `earlier`'s field by field (a
 * field `later` lacks keeps its value), as InfluxDB does for a point written twice.
 */
export function mergeBlocks(earlier: BlockData, later: BlockData): BlockData {
  const a = earlier.ms.length;
  const b = later.ms.length;
  const ms: number[] = [];
  const sub: number[] = [];
  // for each merged row: its row in earlier and in later (-1: none)
  const fromA: number[] = [];
  const fromB: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a || j < b) {
    const order = i >= a ? 1 : j >= b ? -1 : (earlier.ms[i] - later.ms[j]) || (earlier.sub[i] - later.sub[j]);
    if (order < 0) {
      ms.push(earlier.ms[i]); sub.push(earlier.sub[i]); fromA.push(i++); fromB.push(-1);
    } else if (order > 0) {
      ms.push(later.ms[j]); sub.push(later.sub[j]); fromA.push(-1); fromB.push(j++);
    } else {
      ms.push(earlier.ms[i]); sub.push(earlier.sub[i]); fromA.push(i++); fromB.push(j++);
    }
  }
  const width = Math.max(earlier.columns.length, later.columns.length);
  const columns: Array<Column | undefined> = [];
  for (let c = 0; c < width; c++) {
    const ca = earlier.columns[c];
    const cb = later.columns[c];
    if (ca === undefined && cb === undefined) continue;
    const kind = (cb ?? ca)!.kind;
    const va = ca === undefined ? undefined : valuesOfColumn(ca, a);
    const vb = cb === undefined ? undefined : valuesOfColumn(cb, b);
    const values = ms.map((_, r) => {
      const fromLater = fromB[r] >= 0 && vb !== undefined ? vb[fromB[r]] : null;
      if (fromLater !== null) return fromLater;
      return fromA[r] >= 0 && va !== undefined ? va[fromA[r]] : null;
    });
    columns[c] = columnFromValues(kind, values);
  }
  return { ms: Float64Array.from(ms), sub: Int32Array.from(sub), columns };
}

/** A block as stored: its rows, first and last time, encoded statistics and encoded data. */
export function blockRow(block: BlockData): { rows: number; firstMs: number; lastMs: number; stats: Uint8Array; data: Uint8Array } {
  const n = block.ms.length;
  const stats: Array<FieldStats | undefined> = block.columns.map((c) => (c === undefined ? undefined : columnStats(block.ms, block.sub, c)));
  return { rows: n, firstMs: block.ms[0], lastMs: block.ms[n - 1], stats: encodeStats(stats), data: encodeBlock(block) };
}
