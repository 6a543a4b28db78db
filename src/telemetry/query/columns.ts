// What the executor's parts share: the resolved select columns and the per-statement error.
import type { FieldInfo, MeasurementInfo } from '../catalogue-types.ts';
import { FIELD_TYPES, FLOAT, INTEGER, UNSIGNED } from '../line-protocol/line-scanner.ts';
import type { SelectItem } from '../telemetry.schemas.ts';

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

/**
 * The part of a statement's cache key that the columns decide: each column's ordinal and type (measurements share
 * shard tables, and the SQL for column c0 differs between a float and an integer), and its function.
 */
export function columnsKey(columns: readonly Column[]): string {
  return columns.map((c) => `${c.fn ?? ''}${c.field.ordinal}:${c.field.kind}`).join(',');
}
