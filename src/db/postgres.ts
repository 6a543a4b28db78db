// The PostgreSQL backend of the data layer (GRIDKEEPER_DATABASE_URL): the same `Db` seam as the embedded SQLite one
// (open.ts), over a `pg` connection pool. Statements outside a transaction take any pooled connection; a transaction
// holds one connection from BEGIN to COMMIT and its handle sends every statement there.
//
// Isolation, chosen per kind of transaction:
// - write units (Db.write, every write of the HTTP API) run SERIALIZABLE and are retried on a serialization failure
//   or deadlock (40001, 40P01) with a short random back-off; a unit that keeps failing finally runs alone (see
//   serializable below), so every unit completes. Every unit is a check-then-
//   write (If-Unmodified-Since, last root member, cycle refusal, license claim, nodeId uniqueness...); SERIALIZABLE makes
//   each behave as if the units ran one after another — the guarantee the SQLite backend gives by running them on one
//   connection — without a hand-placed lock per check. A unit must therefore be safe to run again: it only touches the
//   database and values it computes itself.
// - Db.read runs REPEATABLE READ READ ONLY: one snapshot for reads that must agree.
// - Db.tx (commands, first-start bootstrap, migrations, telemetry) runs READ COMMITTED; where such a transaction races
//   another process it takes an explicit lock (migrations: a transaction-level advisory lock).
import pg from 'pg';
import type { Db } from './open.ts';
import { bindable, builders, compileQuery, type Query } from './compile.ts';
import { groupCommit } from './group-commit.ts';
import { DatabaseUnavailable } from './unavailable.ts';
import { isLostPrepared, PreparedNames } from './prepared.ts';
import { Savepoints } from './pg-savepoints.ts';

export { DatabaseUnavailable };

const builder = builders.postgres;

// BIGINT (ids, Unix-millisecond times) and NUMERIC (sums) arrive as numbers, as they do from SQLite. Every value we
// store fits a double exactly (ids and times stay far below 2^53).
const INT8 = 20;
const NUMERIC = 1700;
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** How Db.read begins: one snapshot, no writes. */
const READ_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

// Socket errors, and the server's codes for "not now / not you": 08xxx connection exceptions, 28xxx invalid
// authorization, 3D000 no such database, 57P01-57P03 admin shutdown / crash shutdown / cannot connect now.
const UNAVAILABLE = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|08...|28...|3D000|57P0[123])$/;

function unavailable(err: unknown, stats?: PoolCounters): unknown {
  if (err instanceof DatabaseUnavailable) return err;
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
  if (UNAVAILABLE.test(code) || (err instanceof Error && /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(err.message))) {
    if (stats) stats.unavailable++;
    return new DatabaseUnavailable(err);
  }
  return err;
}

/** Runs a step, turning a connection failure into DatabaseUnavailable. */
async function guarded<T>(step: () => Promise<T>, stats?: PoolCounters): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw unavailable(err, stats);
  }
}

/** What a pool counts for /metrics (see Db.poolStats). */
interface PoolCounters {
  /** statements or connections that failed because the server could not be reached */
  unavailable: number;
  /** write-unit transactions run again after a serialization failure or deadlock */
  retries: number;
  /** write units that ran alone after OPTIMISTIC_ATTEMPTS */
  alone: number;
}

const RETRYABLE = new Set(['40001', '40P01']);
/** Optimistic attempts of a write unit before it runs alone (see serializable below). */
const OPTIMISTIC_ATTEMPTS = 4;
/**
 * The table whose lock write units hold shared (ROW SHARE), and a unit that keeps failing holds alone (EXCLUSIVE).
 * A table lock rather than an advisory one: it is taken inside the transaction yet before its snapshot (LOCK TABLE
 * takes none; the snapshot of a SERIALIZABLE transaction starts at its first query), and it ends with the
 * transaction, so no lock ever outlives one — which keeps gridkeeper usable behind a pooler in transaction mode
 * (PgBouncer), where two transactions of one client may run on different server connections.
 */
const WRITE_GATE = 'write_gate';

/** A serialization failure or deadlock: the transaction may simply be run again. */
export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: string }).code ?? '');
}

export interface PostgresOptions {
  url: string;
  /** connections in the pool (default 10) */
  poolSize?: number;
  /** how long to wait for a connection (default 10 s) */
  connectTimeoutMs?: number;
  /** send repeated statements as named prepared statements (default true; see prepared.ts) */
  prepare?: boolean;
}

import type { Executor } from './pg-savepoints.ts';

/**
 * Statements on a pool or a transaction's connection (`pooled`: each statement on its own, so one that failed because
 * a pooler lost its prepared statement just runs again, unnamed); a lost connection becomes DatabaseUnavailable.
 */
function execute(on: Executor, stats: PoolCounters, prepared: PreparedNames, pooled: boolean) {
  const query = async (q: Query<unknown>, rowMode?: 'array') => {
    const c = compileQuery(q, builder);
    const config: pg.QueryConfig & { rowMode?: 'array' } = { text: c.sql, values: bindable(c.parameters) };
    if (rowMode) config.rowMode = rowMode;
    const name = prepared.nameOf(config.text, config.values!.length);
    if (name === undefined) return guarded(() => on.query(config), stats);
    try {
      return await guarded(() => on.query({ ...config, name }), stats);
    } catch (err) {
      if (!pooled || !prepared.lost(err)) throw err;
      return guarded(() => on.query(config), stats);
    }
  };
  return {
    async all<R>(q: Query<R>): Promise<R[]> {
      return (await query(q)).rows as R[];
    },
    async rows<T extends unknown[]>(q: Query<unknown>): Promise<T[]> {
      return (await query(q, 'array')).rows as T[];
    },
    async get<R>(q: Query<R>): Promise<R | undefined> {
      return (await query(q)).rows[0] as R | undefined;
    },
    async run(q: Query<unknown>): Promise<{ changes: number }> {
      return { changes: (await query(q)).rowCount ?? 0 };
    },
    async script(text: string): Promise<void> {
      await guarded(() => on.query(text), stats);
    },
  };
}

function notHere(what: string): never {
  throw new TypeError(`${what} is SQLite only (this database is PostgreSQL)`);
}

/**
 * The transactions of one pool: a transaction holds one connection from BEGIN to COMMIT, its handle sends every
 * statement there, nested units become savepoints, and write units are retried (see serializable).
 */
function pgTransactions(pool: pg.Pool, stats: PoolCounters, prepared: PreparedNames, memo: Map<symbol, unknown>) {
  const guard = <T>(step: () => Promise<T>) => guarded(step, stats);
  let savepoints = 0;
  function txHandle(client: pg.PoolClient, marks: Savepoints): Db & { end(): void } {
    let active = true;
    const ex = execute(marks, stats, prepared, false);
    const live = <T>(step: () => Promise<T>): Promise<T> => (active
      ? step()
      : Promise.reject(new TypeError('a transaction handle was used after its transaction ended')));
    const handle: Db & { end(): void } = {
      backend: 'postgres',
      qb: builder,
      inTransaction: true,
      memo,
      get sqlite(): never { return notHere('the sqlite connection'); },
      all: (q) => live(() => ex.all(q)),
      rows: (q) => live(() => ex.rows(q)),
      get: (q) => live(() => ex.get(q)),
      run: (q) => live(() => ex.run(q)),
      script: (text) => live(() => ex.script(text)),
      tx: (fn) => live(() => nested(marks, handle, fn)),
      read: (fn) => live(() => nested(marks, handle, fn)),
      write: (unit) => live(() => nested(marks, handle, unit)),
      exclusive: () => Promise.reject(new TypeError('exclusive() is SQLite only (this database is PostgreSQL)')),
      close: () => Promise.reject(new TypeError('close() on a transaction handle')),
      end: () => { active = false; },
    };
    return handle;
  }

  async function nested<T>(marks: Savepoints, handle: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
    const name = `gk${++savepoints}`;
    marks.open(name);
    try {
      const result = await fn(handle);
      marks.release(name);
      return result;
    } catch (err) {
      await marks.rollback(name);
      throw err;
    }
  }

  /**
   * One transaction; run once more, unnamed, when it failed because a pooler lost a prepared statement (prepared.ts:
   * nothing of it was committed, and the process names no statements after that).
   */
  async function once<T>(begin: string, body: (tx: Db) => Promise<T>): Promise<T> {
    try {
      return await transaction(begin, body);
    } catch (err) {
      if (!prepared.lost(err)) throw err;
      return transaction(begin, body);
    }
  }

  async function transaction<T>(begin: string, body: (tx: Db) => Promise<T>): Promise<T> {
    const client = await guard(() => pool.connect());
    const marks = new Savepoints(client);
    const handle = txHandle(client, marks);
    let broken = false;
    // The pool listens for errors of idle connections only. A checked-out connection that the server drops between two
    // statements (a restart, a fail-over) emits 'error' with no statement to fail: unheard, it would end the process.
    // Heard here, it marks the connection broken; the next statement on it fails, as DatabaseUnavailable.
    const lost = () => { broken = true; };
    client.on('error', lost);
    const release = () => {
      client.removeListener('error', lost);
      client.release(broken);
    };
    let releaseLater = false;
    try {
      // BEGIN goes with the transaction's first statement: in the same round trip when that has no parameters (a read
      // snapshot's check of staged telemetry, a fold's SET LOCAL), just before it otherwise. A write unit's BEGIN (and
      // its LOCK) is sent at once, so that what fails there fails the batch, not its first unit.
      if (begin === READ_SNAPSHOT || begin === 'BEGIN') marks.begin(begin);
      else await guard(() => client.query(begin));
      try {
        const result = await body(handle);
        // savepoints not sent yet and releases not sent yet change nothing a commit keeps
        marks.forget();
        if (!marks.begun) return result; // nothing ran: there is no transaction to end
        if (begin === READ_SNAPSHOT) {
          // A read-only snapshot's answer is complete before its COMMIT, which keeps nothing and cannot fail on a
          // conflict: the caller goes on at once (one round trip less per read), the connection returns to the pool
          // once the COMMIT is through (or, failed, as broken).
          releaseLater = true;
          void client.query('COMMIT').then(release, () => { broken = true; release(); });
          return result;
        }
        await guard(() => client.query('COMMIT'));
        return result;
      } catch (err) {
        marks.forget();
        if (!marks.begun) throw err;
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone: do not return it to the pool
        }
        throw err;
      }
    } finally {
      handle.end();
      if (!releaseLater) release();
    }
  }

  /**
   * A write unit: optimistic first — SERIALIZABLE, concurrent with the other units, retried after a serialization
   * failure or deadlock with a short growing random back-off. Under heavy contention on a small table (every rights
   * check reads `manages`, so its writers conflict with nearly every unit) retries alone could run out: after
   * OPTIMISTIC_ATTEMPTS the unit runs alone. Every unit holds the table lock WRITE_GATE shared; the last attempt
   * takes it exclusively before its snapshot is taken, so no other write unit runs beside it and it cannot fail on a
   * conflict again. Readers (Db.read, statements outside units) never take the lock.
   */
  async function serializable<T>(body: (tx: Db) => Promise<T>): Promise<T> {
    for (let attempt = 1; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      try {
        return await once(`BEGIN ISOLATION LEVEL SERIALIZABLE; LOCK TABLE ${WRITE_GATE} IN ROW SHARE MODE`, body);
      } catch (err) {
        if (!isRetryable(err)) throw err;
        stats.retries++;
        // back off a little, growing, with jitter, so the racers do not collide again in lockstep
        await new Promise((r) => setTimeout(r, Math.random() * 2 ** attempt));
      }
    }
    stats.alone++;
    return once(`BEGIN ISOLATION LEVEL SERIALIZABLE; LOCK TABLE ${WRITE_GATE} IN EXCLUSIVE MODE`, body);
  }

  return { once, serializable };
}

export function openPostgres(options: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.url, max: options.poolSize ?? 10, types,
    // a server that does not answer is reported instead of waited for forever
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
  });
  // An idle pooled connection that dies (server restart) must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});
  const stats: PoolCounters = { unavailable: 0, retries: 0, alone: 0 };
  const prepared = new PreparedNames(options.prepare ?? true);
  const memo = new Map<symbol, unknown>();
  const { once, serializable } = pgTransactions(pool, stats, prepared, memo);

  // Write units of one event-loop turn share one transaction (group commit, as on SQLite): they run one after another,
  // each in a savepoint, so units of this process never conflict with each other, and one commit (one fsync on the
  // server) serves them all. A serialization failure against another process runs the whole batch again.
  // A prepared statement the pooler lost, met inside a unit, dooms the batch too: the transaction then runs again,
  // every unit in it, unnamed (pgTransactions: once); caught as the unit's own error it failed that unit (its caller
  // got it).
  const writes = groupCommit<Db>((body) => serializable(body), { abortsBatch: (err) => isRetryable(err) || isLostPrepared(err) });
  const root = execute(pool, stats, prepared, true);
  let closed = false;
  return {
    backend: 'postgres',
    qb: builder,
    inTransaction: false,
    memo,
    get sqlite(): never { return notHere('the sqlite connection'); },
    all: (q) => root.all(q),
    rows: (q) => root.rows(q),
    get: (q) => root.get(q),
    run: (q) => root.run(q),
    script: (text) => root.script(text),
    poolStats: () => ({
      size: options.poolSize ?? 10, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...stats,
      prepared: prepared.size,
    }),
    tx: (fn) => once('BEGIN', fn),
    read: (fn) => once(READ_SNAPSHOT, fn),
    write: (unit) => writes.run(unit),
    exclusive: () => Promise.reject(new TypeError('exclusive() is SQLite only (this database is PostgreSQL)')),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
