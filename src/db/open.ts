// Opens the embedded SQLite database. Every query runs synchronously on ONE better-sqlite3 connection; Kysely is used
// as a typed query builder whose compiled SQL we execute here. Because a transaction is a synchronous function, no other
// request can interleave with it: check-then-write sequences are atomic and SQLITE_BUSY cannot arise inside the process.
import Database from 'better-sqlite3';
import {
  DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler,
  type Compilable, type CompiledQuery, type RawBuilder,
} from 'kysely';
import type { Schema } from './schema.ts';
import { groupCommit } from './group-commit.ts';
import { LruCache } from '../lru-cache.ts';

export interface Db {
  readonly sqlite: Database.Database;
  /** Typed query builder; build with it, then run with all/get/run. Never call .execute() on it. */
  readonly qb: Kysely<Schema>;
  all<R>(query: Compilable<R> | RawBuilder<R>): R[];
  get<R>(query: Compilable<R> | RawBuilder<R>): R | undefined;
  run(query: Compilable<unknown> | RawBuilder<unknown>): { changes: number; lastInsertRowid: number };
  /** Runs fn in an IMMEDIATE transaction (nested calls become savepoints). A throw rolls everything back. */
  tx<T>(fn: () => T): T;
  /**
   * How the HTTP API writes: `unit` (synchronous, all-or-nothing) runs in the next group commit, which it shares with
   * the other units of the same event-loop turn; the promise settles after that commit (see group-commit.ts).
   */
  write<T>(unit: () => T): Promise<T>;
  /** A cached prepared statement for hand-written SQL (recursive CTEs in src/access). */
  prepare(sqlText: string): Database.Statement;
  close(): void;
}

export interface OpenOptions {
  /** file path, or ':memory:' */
  file: string;
  /** loaded better-sqlite3 addon, needed once bundled (see src/native.ts) */
  nativeBinding?: unknown;
  readonly?: boolean;
}

const builder = new Kysely<Schema>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

// better-sqlite3 binds numbers, strings, bigints, buffers and null only.
function bindable(values: readonly unknown[]): unknown[] {
  return values.map((v) => (v === true ? 1 : v === false ? 0 : v === undefined ? null : v));
}

function isRaw(q: unknown): q is RawBuilder<unknown> {
  return typeof q === 'object' && q !== null && (q as { isRawBuilder?: boolean }).isRawBuilder === true;
}

export function openDatabase(options: OpenOptions): Db {
  const sqlite = new Database(options.file, {
    readonly: options.readonly ?? false,
    ...(options.nativeBinding ? { nativeBinding: options.nativeBinding as string } : {}),
  });
  applyPragmas(sqlite, options.file === ':memory:');

  // Bounded statement cache: hot queries skip preparation; dynamic SQL cannot grow it forever.
  const cache = new LruCache<string, Database.Statement>(500);
  function prepare(sqlText: string): Database.Statement {
    let stmt = cache.get(sqlText);
    if (stmt === undefined) cache.set(sqlText, stmt = sqlite.prepare(sqlText));
    return stmt;
  }
  // Transactions from cached statements: better-sqlite3's transaction(fn) builds a new wrapper on every call, which
  // showed up as the largest single cost of a device PATCH. Nested calls become savepoints (all named gk: SQLite
  // releases or rolls back the most recent savepoint of that name).
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const savepoint = sqlite.prepare('SAVEPOINT gk');
  const release = sqlite.prepare('RELEASE gk');
  const rollbackTo = sqlite.prepare('ROLLBACK TO gk');
  function transaction<T>(fn: () => T): T {
    const nested = sqlite.inTransaction;
    (nested ? savepoint : begin).run();
    let result: T;
    try {
      result = fn();
      if (result instanceof Promise) throw new TypeError('a transaction function must be synchronous (it returned a promise)');
    } catch (err) {
      // A failed statement may already have ended the transaction (SQLITE_FULL, some I/O errors): roll back what is left.
      if (sqlite.inTransaction) {
        if (nested) { rollbackTo.run(); release.run(); } else rollback.run();
      }
      throw err;
    }
    try {
      (nested ? release : commit).run();
    } catch (err) {
      if (!nested && sqlite.inTransaction) rollback.run();
      throw err;
    }
    return result;
  }
  function compile(q: Compilable<unknown> | RawBuilder<unknown>): CompiledQuery {
    return isRaw(q) ? q.compile(builder) : q.compile();
  }
  const writes = groupCommit(transaction);
  const db: Db = {
    sqlite,
    qb: builder,
    all<R>(q: Compilable<R> | RawBuilder<R>) {
      const c = compile(q);
      return prepare(c.sql).all(...bindable(c.parameters)) as R[];
    },
    get<R>(q: Compilable<R> | RawBuilder<R>) {
      const c = compile(q);
      return prepare(c.sql).get(...bindable(c.parameters)) as R | undefined;
    },
    run(q) {
      const c = compile(q);
      // INSERT/UPDATE ... RETURNING are readers: use get()/all() for those.
      const info = prepare(c.sql).run(...bindable(c.parameters));
      return { changes: info.changes, lastInsertRowid: Number(info.lastInsertRowid) };
    },
    tx<T>(fn: () => T): T {
      return transaction(fn);
    },
    write: (unit) => writes.run(unit),
    prepare,
    close() {
      cache.clear();
      if (sqlite.open) sqlite.close();
    },
  };
  return db;
}

function applyPragmas(sqlite: Database.Database, memory: boolean): void {
  // WAL: readers never block the writer, and `gridkeeper backup` can copy while we serve.
  if (!memory) sqlite.pragma('journal_mode = WAL');
  // synchronous=FULL in WAL mode fsyncs the WAL on every commit: a 2xx answer means the write survives kill -9 AND
  // power loss. NORMAL would be faster but may lose the last commits on power loss — wrong for an appliance that
  // acknowledges writes to controllers.
  sqlite.pragma('synchronous = FULL');
  // Relations cascade (role -> members/monitors, device -> monitors/license_datalink).
  sqlite.pragma('foreign_keys = ON');
  // Another process (gridkeeper backup, migrate, an operator's sqlite3 shell) may hold a lock briefly.
  sqlite.pragma('busy_timeout = 5000');
  // Temporary B-trees for recursive CTEs and sorts stay in memory.
  sqlite.pragma('temp_store = MEMORY');
  // A bounded page cache (~32 MiB) keeps RSS predictable on small gateways.
  sqlite.pragma('cache_size = -32000');
  // Checkpoint every ~10,000 pages (~40 MB of WAL) instead of SQLite's 1,000: fewer, larger checkpoints cut a telemetry
  // write's commit from 10.8 to 8.3 ms (bench/telemetry).
  sqlite.pragma('wal_autocheckpoint = 10000');
  // SQLite reuses the WAL file without shrinking it: after a checkpoint, cut it back to 64 MiB at most, so one large
  // telemetry write (up to 32 MiB) does not leave a huge file on a small gateway's disk.
  sqlite.pragma('journal_size_limit = 67108864');
}
