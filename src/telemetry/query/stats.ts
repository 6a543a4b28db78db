// Statistics of a field over a range, as every reader computes and merges them: count, sum, min and max (integers
// exact), and the statistics blocks of a head shard table (1/24th of its window).
import type { FieldInfo } from '../catalogue-types.ts';
import { INTEGER, UNSIGNED } from '../line-protocol/line-scanner.ts';

/** Head shard tables keep statistics per 1/24th of their window (an hour of a 1-day shard), on both backends. */
export const BLOCKS_PER_SHARD = 24;


export interface Stats {
  count: number;
  /** number for floats; bigint (exact) for integers */
  sum: number | bigint;
  min: number | bigint | undefined;
  max: number | bigint | undefined;
}

export const emptyStats = (): Stats => ({ count: 0, sum: 0, min: undefined, max: undefined });

/** Adds b into a. */
export function mergeStats(a: Stats, b: Stats): void {
  if (b.count === 0) return;
  a.count += b.count;
  a.sum = typeof a.sum === 'bigint' || typeof b.sum === 'bigint' ? BigInt(a.sum) + BigInt(b.sum) : a.sum + b.sum;
  if (a.min === undefined || (b.min !== undefined && b.min < a.min)) a.min = b.min;
  if (a.max === undefined || (b.max !== undefined && b.max > a.max)) a.max = b.max;
}

export function statsFromRow(r: readonly unknown[], at: number, field: FieldInfo): Stats {
  const count = r[at] as number;
  if (count === 0) return emptyStats();
  const int = field.kind === INTEGER || field.kind === UNSIGNED;
  const value = (v: unknown) => (int ? BigInt(v as string) : v as number);
  return { count, sum: value(r[at + 1]), min: value(r[at + 2]), max: value(r[at + 3]) };
}


export class IntegerOverflow extends Error {}

