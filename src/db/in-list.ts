// The one way a list of values is bound for `IN`: a single JSON-text parameter expanded by json_each. The statement's
// text does not change with the list's length, so it is prepared once and cached, and no list is too long to bind.
// (PostgreSQL: src/db/postgres.ts rewrites exactly this text into `= ANY($n)` with the list bound as an array.)
import { sql, type RawBuilder } from 'kysely';

/** The bound value: the list as one JSON text. */
function listParam(values: readonly unknown[]): string {
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
