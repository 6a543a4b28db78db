// What both backends share: the compile-only Kysely builders (queries are built and compiled here, and run by the
// backend's driver, never by Kysely), and the values a driver binds.
import {
  DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector,
  SqliteQueryCompiler, type Compilable, type CompiledQuery, type DefaultQueryCompiler, type DialectAdapter,
  type QueryCompiler, type RawBuilder,
} from 'kysely';
import type { Schema } from './schema.ts';
import { IN_LIST_FORMS, ValueList, type InListForm } from './in-list.ts';

export type Query<R> = Compilable<R> | RawBuilder<R>;

/** The dialect's compiler, writing an IN-list parameter (in-list.ts) in the dialect's form. */
function withInLists<C extends new (...args: any[]) => DefaultQueryCompiler>(Base: C, form: InListForm) {
  return class extends Base {
    protected override appendValue(value: unknown): void {
      if (!(value instanceof ValueList)) return super.appendValue(value);
      this.append(form.before);
      super.appendValue(form.bind(value));
      this.append(form.after);
    }
  };
}

const SqliteCompiler = withInLists(SqliteQueryCompiler, IN_LIST_FORMS.sqlite);
const PostgresCompiler = withInLists(PostgresQueryCompiler, IN_LIST_FORMS.postgres);

type Introspector = typeof SqliteIntrospector | typeof PostgresIntrospector;

function compileOnly(adapter: () => DialectAdapter, introspector: Introspector, compiler: () => QueryCompiler): Kysely<Schema> {
  return new Kysely<Schema>({
    dialect: {
      createAdapter: adapter,
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new introspector(db),
      createQueryCompiler: compiler,
    },
  });
}

/** Each backend's builder (Db.qb): builds and compiles, never executes. */
export const builders = {
  sqlite: compileOnly(() => new SqliteAdapter(), SqliteIntrospector, () => new SqliteCompiler()),
  postgres: compileOnly(() => new PostgresAdapter(), PostgresIntrospector, () => new PostgresCompiler()),
} as const;

function isRaw(q: unknown): q is RawBuilder<unknown> {
  return typeof q === 'object' && q !== null && (q as { isRawBuilder?: boolean }).isRawBuilder === true;
}

/** The statement's text and parameters; a `sql` template is compiled by `qb`'s dialect, a builder query by its own. */
export function compileQuery(q: Query<unknown>, qb: Kysely<Schema> = builders.sqlite): CompiledQuery {
  return isRaw(q) ? q.compile(qb) : q.compile();
}

/** Flags are 0/1 integers on both backends (the rows read the same), and undefined is NULL. */
export function bindable(values: readonly unknown[]): unknown[] {
  return values.map((v) => (v === true ? 1 : v === false ? 0 : v === undefined ? null : v));
}
