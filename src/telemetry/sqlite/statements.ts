// The SQLite readers' statements: cached per shard table (and its width) and query shape, the SQL built on a miss.
import type { Statement } from 'better-sqlite3';
import type { Catalogue, FieldInfo, ShardInfo } from './catalogue.ts';

/** A field's column in a shard table, or NULL when the table predates the field (it was never widened for it). */
export function columnIn(shard: ShardInfo, field: FieldInfo): string | undefined {
  return field.ordinal < shard.columns ? `c${field.ordinal}` : undefined;
}

/**
 * Up to this many rows, a statement that reads rows up to a limit is prepared with the limit written into it (one
 * statement per limit) instead of bound: SQLite answers the latest point of a field several times faster with a
 * literal LIMIT 1 than with a bound one; beyond a few rows the rows cost more than the difference.
 */
export const LITERAL_LIMITS = 16;

export function statement(catalogue: Catalogue, key: string, build: () => string): Statement {
  return catalogue.statement(key, build, true);
}
