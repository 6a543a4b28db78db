// The one way a list of values is bound for `IN`, in each backend's own form: ONE parameter whatever the list's length,
// so a statement's text does not change with it (prepared once, cached) and no list is too long to bind.
// - SQLite: `IN (SELECT value FROM json_each(?))`, the list bound as one JSON text;
// - PostgreSQL: `= ANY($n)`, the list bound as an array, whose element type the server takes from the left operand
//   (bigint ids, text node ids), also for an empty list.
// The backend's query compiler (db/compile.ts) writes the form when it meets the list, so one query serves both.
import { sql, type RawBuilder, type SqlBool } from 'kysely';

/** A list to be bound as one parameter: what inValues() puts in a statement. */
export class ValueList {
  constructor(readonly values: readonly unknown[]) {}
}

/** A dialect's `<operand> IN list`: the text before the one parameter, the parameter, the text after it. */
export interface InListForm {
  before: string;
  bind(list: ValueList): unknown;
  after: string;
}

export const IN_LIST_FORMS: Record<'sqlite' | 'postgres', InListForm> = {
  sqlite: { before: 'IN (SELECT value FROM json_each(', bind: (list: ValueList): unknown => JSON.stringify(list.values), after: '))' },
  postgres: { before: '= ANY(', bind: (list: ValueList): unknown => [...list.values], after: ')' },
};

/** For `sql` templates: sql`... WHERE id ${inValues(ids)}`. */
export function inValues<T>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`${new ValueList(values)}`;
}

/** For the query builder: `.where(isIn('id', ids))`, or inside `eb.and([...])`. */
export function isIn(column: string, values: readonly unknown[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} ${inValues(values)}`;
}
