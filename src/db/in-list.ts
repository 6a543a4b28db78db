// The one way a list of values is bound for `IN`: a single JSON-text parameter expanded by json_each. The statement's
// text does not change with the list's length, so it is prepared once and cached, and no list is too long to bind.
import { sql, type RawBuilder } from 'kysely';

/** SQL text `IN (SELECT value FROM json_each(<param>))`, for hand-written statements; bind listParam(values). */
export function inJson(param = '?'): string {
  return `IN (SELECT value FROM json_each(${param}))`;
}

/** The bound value for inJson(). */
export function listParam(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

/** For the query builder: `.where('id', 'in', valuesIn(ids))`. */
export function valuesIn<T>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`(SELECT value FROM json_each(${listParam(values)}))`;
}

/** For `sql` templates: sql`... WHERE id ${inValues(ids)}` — the same single-parameter IN-list. */
export function inValues<T>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`IN (SELECT value FROM json_each(${listParam(values)}))`;
}
