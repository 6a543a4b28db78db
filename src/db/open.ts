// The data layer's one seam: `Db`, an asynchronous handle over one storage backend. Stores build queries with the
// typed builder (`qb`, Kysely) or the `sql` template tag and run them with all/get/run, which return promises; a
// transaction is a function that receives a transaction handle (`tx`, `write`) and passes it down, in the style of
// Kysely's own example application. Code inside a transaction uses the handle it was given, never the root handle.
//
// This file is the embedded backend: ONE better-sqlite3 connection. Statements execute synchronously, so a statement
// run while no transaction is open is atomic by itself; a transaction holds the connection (the gate) from BEGIN to
// COMMIT, and statements of other requests wait for it — nothing interleaves inside a check-then-write, and no request
// ever reads another's uncommitted data.
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, fdatasync, openSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Schema } from './schema.ts';
import { bindable, builders, compileQuery, type Query } from './compile.ts';
import { Gate } from './gate.ts';
import { groupCommit } from './group-commit.ts';
import { LruCache } from '../lib/lru-cache.ts';
import { sqliteTransactions } from './sqlite-transactions.ts';
import { WriteLock } from './write-lock.ts';

export { compileQuery, type Query };

export interface Db {
  readonly backend: 'sqlite' | 'postgres';
  /** Typed query builder; build with it, then run with all/get/run. Never call .execute() on it. */
  readonly qb: Kysely<Schema>;
  /** true on a transaction handle (inside tx/write) */
  readonly inTransaction: boolean;
  all<R>(query: Query<R>): Promise<R[]>;
  /**
   * The rows as arrays, values in the order of the select list. No object per row from the driver (SQLite's builds
   * each key by key), for readers of many rows that make their own objects faster.
   */
  rows<T extends unknown[]>(query: Query<unknown>): Promise<T[]>;
  get<R>(query: Query<R>): Promise<R | undefined>;
  /** For statements without RETURNING; `changes` counts the rows written. */
  run(query: Query<unknown>): Promise<{ changes: number }>;
  /** Runs a script of statements without parameters or results (migrations, DDL). */
  script(text: string): Promise<void>;
  /**
   * Runs fn in a transaction and returns its result; fn receives the transaction handle and must use it for every
   * statement. A throw (or rejection) rolls everything back. On a transaction handle it becomes a savepoint.
   */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * Runs fn in a read-only snapshot: every statement fn runs sees the same committed state (several reads that must
   * agree, e.g. a selection and its serialization). On a transaction handle it simply runs inside that transaction.
   */
  read<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * How the HTTP API writes: `unit` (all-or-nothing) runs in the next group commit, shared with the other units that
   * arrived in the same event-loop turn; the promise settles after that commit (see group-commit.ts). On a
   * transaction handle the unit simply runs inside that transaction (as a savepoint).
   */
  write<T>(unit: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * SQLite only: runs fn synchronously with the connection to itself — no transaction of another request is open
   * while it runs. For the telemetry engine, whose hot loops use better-sqlite3 directly.
   */
  exclusive<T>(fn: (conn: SqliteConnection) => T): Promise<T>;
  /** PostgreSQL, the root handle only: the connection pool's figures for /metrics. */
  readonly poolStats?: () => PoolStats;
  /**
   * Memory that lives as long as this database handle, shared by the root handle and its transaction handles: caches
   * of what the database holds, each entry checked against the database before use (see rights.ts readable sets).
   */
  readonly memo: Map<symbol, unknown>;
  /** SQLite only: the connection, for file-level facts (name, memory) and maintenance outside requests. */
  readonly sqlite: Database.Database;
  close(): Promise<void>;
}

export interface PoolStats {
  /** connections the pool may open */
  size: number;
  /** connections open now, of which idle */
  open: number;
  idle: number;
  /** requests waiting for a connection */
  waiting: number;
  /** since start: statements or connections that failed because the server could not be reached */
  unavailable: number;
  /** since start: write transactions run again after a serialization failure or deadlock */
  retries: number;
  /** since start: write units that ran alone after repeated conflicts */
  alone: number;
  /** statement texts sent as named prepared statements now (db/prepared.ts; 0 when off) */
  prepared: number;
}

/** The synchronous face of the SQLite connection, handed out by Db.exclusive. */
export interface SqliteConnection {
  readonly sqlite: Database.Database;
  /** the database file, and what a second connection in a worker thread needs to open it (undefined: in memory, read-only) */
  readonly file?: { path: string; addonFile?: string; writeLock: WriteLock };
  /** Runs fn when the database closes, before the connection does (a worker thread on the same file ends first). */
  atClose(fn: () => Promise<void>): void;
  /** A cached prepared statement for hand-written SQL. */
  prepare(sqlText: string): Database.Statement;
  /** Runs fn in an IMMEDIATE transaction (nested calls become savepoints). A throw rolls everything back. */
  transaction<T>(fn: () => T): T;
  /** Runs fn in a read snapshot (BEGIN DEFERRED ... COMMIT); inside a transaction, simply within it. */
  snapshot<T>(fn: () => T): T;
}

export interface OpenOptions {
  /** file path, or ':memory:' */
  file: string;
  /** loaded better-sqlite3 addon, needed once bundled (see db/native.ts) */
  nativeBinding?: unknown;
  /** the addon's file, for a connection in a worker thread (db/native.ts addonFile) */
  addonFile?: string;
  readonly?: boolean;
  /**
   * Refuse (with an error) a statement on the root handle issued from inside a transaction of the same database —
   * it would otherwise wait for that very transaction forever. Costs an AsyncLocalStorage scope per transaction:
   * on in tests (GRIDKEEPER_CHECK_DB_HANDLES=1), off in production.
   */
  checkHandles?: boolean;
}

const builder: Kysely<Schema> = builders.sqlite;

const txScope = new AsyncLocalStorage<object>();

export function openDatabase(options: OpenOptions): Db {
  const sqlite = new Database(options.file, {
    readonly: options.readonly ?? false,
    ...(options.nativeBinding ? { nativeBinding: options.nativeBinding as string } : {}),
  });
  applyPragmas(sqlite, options.file === ':memory:');
  const checkHandles = options.checkHandles ?? process.env.GRIDKEEPER_CHECK_DB_HANDLES === '1';

  // Bounded statement cache: hot queries skip preparation; dynamic SQL cannot grow it forever.
  const cache = new LruCache<string, Database.Statement>(500);
  function prepare(sqlText: string): Database.Statement {
    let stmt = cache.get(sqlText);
    if (stmt === undefined) cache.set(sqlText, stmt = sqlite.prepare(sqlText));
    return stmt;
  }
  // The file's write lock between this thread and a worker's connection (write-lock.ts): held from BEGIN IMMEDIATE to
  // the end of the transaction, and around a write statement run on its own.
  const file = options.file === ':memory:' || options.readonly
    ? undefined : { path: options.file, addonFile: options.addonFile, writeLock: new WriteLock() };
  const lock = file?.writeLock;
  const { begin, beginRead, commit, savepoint, transaction, snapshot, undo, done, locked } = sqliteTransactions(sqlite, lock);
  // Every commit is durable before anyone hears of it. The connection's setting is synchronous=FULL (SQLite fsyncs the
  // WAL inside COMMIT, on the event loop); the transactions of Db.tx/write instead commit under NORMAL and sync the WAL
  // themselves on the thread pool (walSync below). Synchronous transactions (Db.exclusive: migrations, telemetry
  // prune) keep FULL.
  const syncNormal = sqlite.prepare('PRAGMA synchronous = NORMAL');
  const syncFull = sqlite.prepare('PRAGMA synchronous = FULL');
  const walSync = options.file === ':memory:' || options.readonly ? undefined : walSyncer(options.file);
  const closing: Array<() => Promise<void>> = [];
  const conn: SqliteConnection = { sqlite, file, prepare, transaction, snapshot, atClose: (fn) => { closing.push(fn); } };

  function all<R>(q: Query<R>): R[] {
    const c = compileQuery(q);
    return prepare(c.sql).all(...bindable(c.parameters)) as R[];
  }
  function rows<T extends unknown[]>(q: Query<unknown>): T[] {
    const c = compileQuery(q);
    // raw() is a flag of the cached statement, which all() shares: set for this call only
    const stmt = prepare(c.sql).raw(true);
    try {
      return stmt.all(...bindable(c.parameters)) as T[];
    } finally {
      stmt.raw(false);
    }
  }
  function get<R>(q: Query<R>): R | undefined {
    const c = compileQuery(q);
    return prepare(c.sql).get(...bindable(c.parameters)) as R | undefined;
  }
  function run(q: Query<unknown>): { changes: number } {
    const c = compileQuery(q);
    // INSERT/UPDATE ... RETURNING are readers: use get()/all() for those.
    const stmt = prepare(c.sql);
    return { changes: (stmt.readonly ? stmt.run(...bindable(c.parameters)) : locked(() => stmt.run(...bindable(c.parameters)))).changes };
  }

  const gate = new Gate();
  let closed = false;

  /** Runs a synchronous step on the root handle: at once when the connection is free, else after the transaction. */
  function onRoot<T>(step: () => T): Promise<T> {
    if (!gate.busy) {
      try {
        return Promise.resolve(step());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (checkHandles && txScope.getStore() === root) {
      return Promise.reject(new TypeError('the root database handle was used inside a transaction: use the handle passed to the unit'));
    }
    return gate.acquire().then(() => {
      try {
        return step();
      } finally {
        gate.release();
      }
    });
  }

  /** A handle bound to the open transaction; dead once it ends. */
  const memo = new Map<symbol, unknown>();
  function txHandle(): Db & { end(): void } {
    let active = true;
    const live = <T>(step: () => T): Promise<T> => {
      if (!active) return Promise.reject(new TypeError('a transaction handle was used after its transaction ended'));
      try {
        return Promise.resolve(step());
      } catch (err) {
        return Promise.reject(err);
      }
    };
    const handle: Db & { end(): void } = {
      backend: 'sqlite',
      qb: builder,
      inTransaction: true,
      memo,
      sqlite,
      all: (q) => live(() => all(q)),
      rows: (q) => live(() => rows(q)),
      get: (q) => live(() => get(q)),
      run: (q) => live(() => run(q)),
      script: (text) => live(() => { sqlite.exec(text); }),
      tx: (fn) => nestedTx(handle, fn),
      read: (fn) => nestedTx(handle, fn),
      write: (unit) => nestedTx(handle, unit),
      exclusive: (fn) => live(() => fn(conn)),
      close: () => Promise.reject(new TypeError('close() on a transaction handle')),
      end: () => { active = false; },
    };
    return handle;
  }

  async function nestedTx<T>(handle: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
    savepoint.run();
    let result: T;
    try {
      result = await fn(handle);
    } catch (err) {
      undo(true);
      throw err;
    }
    done(true);
    return result;
  }

  /** Owns the connection for `body` inside BEGIN IMMEDIATE ... COMMIT; the handle dies with the transaction. */
  async function withTransaction<T>(body: (tx: Db) => Promise<T>, readOnly = false): Promise<T> {
    if (closed) throw new TypeError('the database is closed');
    await gate.acquire();
    const handle = txHandle();
    // The commit's fsync, off the event loop: a write transaction commits under synchronous=NORMAL (the WAL is written,
    // not synced; the level may only change outside a transaction), then fdatasync runs on libuv's thread pool while
    // other requests are parsed, authenticated and validated. The connection stays ours until the WAL is on disk, so
    // nobody reads data that is not yet durable, and the caller hears of success only then: a 2xx still survives power
    // loss, exactly as under synchronous=FULL.
    const ownSync = !readOnly && walSync !== undefined;
    let holding = false;
    try {
      if (ownSync) syncNormal.run();
      if (!readOnly && lock !== undefined) {
        lock.hold();
        holding = true;
      }
      (readOnly ? beginRead : begin).run();
      let result: T;
      try {
        result = checkHandles ? await txScope.run(root, () => body(handle)) : await body(handle);
      } catch (err) {
        undo(false);
        throw err;
      }
      done(false);
      if (holding) {
        holding = false;
        lock!.release();
      }
      if (ownSync) await walSync.sync();
      return result;
    } finally {
      if (holding) lock!.release();
      if (ownSync && !sqlite.inTransaction) syncFull.run();
      handle.end();
      gate.release();
    }
  }

  const writes = groupCommit(withTransaction);

  const root: Db = {
    backend: 'sqlite',
    qb: builder,
    inTransaction: false,
    memo,
    sqlite,
    all: (q) => onRoot(() => all(q)),
    rows: (q) => onRoot(() => rows(q)),
    get: (q) => onRoot(() => get(q)),
    run: (q) => onRoot(() => run(q)),
    script: (text) => onRoot(() => locked(() => { sqlite.exec(text); })),
    tx: (fn) => withTransaction(fn),
    read: (fn) => withTransaction(fn, true),
    write: (unit) => writes.run(unit),
    exclusive: (fn) => onRoot(() => fn(conn)),
    async close() {
      if (closed) return;
      closed = true;
      for (const fn of closing.splice(0)) await fn();
      await gate.acquire();
      cache.clear();
      memo.clear();
      walSync?.close();
      if (sqlite.open) sqlite.close();
      gate.release();
    },
  };
  return root;
}

/**
 * fdatasync of the database's WAL file, on libuv's thread pool. The descriptor is opened on first use (the WAL exists
 * once a transaction has written) and opened again should the file ever be replaced (another process deleted it when
 * it closed the database last, and SQLite created a new one).
 */
function walSyncer(file: string): { sync(): Promise<void>; close(): void } {
  const path = `${file}-wal`;
  let fd: number | undefined;
  let inode = -1;
  const close = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  const sync = () => new Promise<void>((resolve, reject) => {
    try {
      const current = statSync(path).ino;
      if (fd === undefined || current !== inode) {
        close();
        fd = openSync(path, 'r+');
        inode = current;
      }
    } catch (err) {
      // no WAL file yet: nothing was ever written to one, so nothing waits for a sync
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') resolve();
      else reject(err);
      return;
    }
    fdatasync(fd, (err) => (err ? reject(err) : resolve()));
  });
  return { sync, close };
}

function applyPragmas(sqlite: Database.Database, memory: boolean): void {
  // A new file keeps track of its free pages, so that sealing telemetry (which drops shard tables) can give them back
  // to the disk (telemetry/sqlite/seal.ts). Only takes on a file without tables; an older file keeps its setting.
  if (!memory && !sqlite.readonly) sqlite.pragma('auto_vacuum = INCREMENTAL');
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
  // Checkpoint every ~10,000 pages (~40 MB of WAL) instead of SQLite's 1,000: fewer, larger checkpoints make a
  // telemetry write's commit cheaper.
  sqlite.pragma('wal_autocheckpoint = 10000');
  // SQLite reuses the WAL file without shrinking it: after a checkpoint, cut it back to 64 MiB at most, so one large
  // telemetry write (up to 32 MiB) does not leave a huge file on a small gateway's disk.
  sqlite.pragma('journal_size_limit = 67108864');
}
