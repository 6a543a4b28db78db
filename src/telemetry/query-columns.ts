// What the executor's parts share: the resolved select columns, the per-statement error, and the SQL pieces that
// depend on a shard table's width.
import type { Statement } from 'better-sqlite3';
import type { Catalogue, FieldInfo, MeasurementInfo, ShardInfo } from './catalogue.ts';
import { FIELD_TYPES, FLOAT, INTEGER, UNSIGNED } from './line-scanner.ts';
import type { SelectItem } from './telemetry.schemas.ts';

export type AggregateFunction = 'sum' | 'min' | 'max' | 'mean';

export interface Column {
  field: FieldInfo;
  fn: AggregateFunction | undefined;
  name: string;
}

/** An error of one statement of a batch (bad field, ...): answered as that statement's `error`. */
export class StatementError extends Error {}

export function resolveColumns(m: MeasurementInfo, select: readonly SelectItem[]): Column[] {
  const columns = select.map((item): Column => {
    const name = typeof item === 'string' ? item : item.field;
    const fn = typeof item === 'string' ? undefined : item.function;
    const field = m.fields.get(name);
    if (field === undefined) throw new StatementError(`field ${JSON.stringify(name)} does not exist in measurement ${JSON.stringify(m.name)}`);
    if (fn !== undefined && !isNumeric(field)) {
      throw new StatementError(`${fn}() needs a numeric field; ${JSON.stringify(name)} is ${FIELD_TYPES[field.kind]}`);
    }
    return { field, fn, name: fn === undefined ? name : `${fn}_${name}` };
  });
  const functions = columns.filter((c) => c.fn !== undefined).length;
  if (functions > 0 && functions < columns.length) {
    throw new StatementError('mixing functions and plain fields in one select is not supported');
  }
  return columns;
}

export function isNumeric(field: FieldInfo): boolean {
  return field.kind === FLOAT || field.kind === INTEGER || field.kind === UNSIGNED;
}

export function isInteger(field: FieldInfo): boolean {
  return field.kind === INTEGER || field.kind === UNSIGNED;
}

/** A field's column in a shard table, or NULL when the table predates the field (it was never widened for it). */
export function columnIn(shard: ShardInfo, field: FieldInfo): string | undefined {
  return field.ordinal < shard.columns ? `c${field.ordinal}` : undefined;
}

/**
 * The part of a statement's cache key that the columns decide: each column's ordinal and type (measurements share
 * shard tables, and the SQL for column c0 differs between a float and an integer), and its function.
 */
export function columnsKey(columns: readonly Column[]): string {
  return columns.map((c) => `${c.fn ?? ''}${c.field.ordinal}:${c.field.kind}`).join(',');
}

/** Statements are cached per shard table (and its width) and query shape; the SQL is only built on a miss. */
/**
 * Up to this many rows, a statement that reads rows up to a limit is prepared with the limit written into it (one
 * statement per limit) instead of bound: SQLite answers the latest point of a field in 2.6 µs with LIMIT 1, in
 * 10.9 µs with LIMIT ? bound to 1 (measured on 1M points); beyond a few rows the rows cost more than the difference.
 */
export const LITERAL_LIMITS = 16;

export function statement(catalogue: Catalogue, key: string, build: () => string): Statement {
  return catalogue.statement(key, build, true);
}

