// Running a query request's synchronous attempts on either backend (reads-types.ts): on SQLite an attempt runs once,
// synchronously on the connection; on PostgreSQL it runs until it lacks nothing, the request's reads fetched between
// runs. An attempt must therefore be a pure function of what it reads: it may run several times.
import type { Db, SqliteConnection } from '../db/open.ts';
import { catalogueOf } from './sqlite/catalogue.ts';
import { PgReads, readsOnKeptCatalogue } from './pg/pg-reads.ts';
import type { TelemetryReads } from './query/reads-types.ts';
import { sqliteReads } from './sqlite/reads.ts';
import { settleStaged } from './sqlite/staging.ts';
import { foldStaged, guardedSnapshotState, settleStaged as settleStagedPg, snapshotState, type StagedThrough } from './pg/pg-staging.ts';
import { storeBlockStats } from './pg/pg-block-stats.ts';

export interface ReadAttempts {
  /** Runs `attempt` inside the transaction `tx` (a snapshot, for answers that must agree) and returns its complete result. */
  run<T>(tx: Db, attempt: (reads: TelemetryReads) => T): Promise<T>;
  /**
   * After the snapshot: stores what the attempts computed that later reads may use (PostgreSQL's block statistics,
   * pg/pg-block-stats.ts); nothing inside a caller's transaction, nothing on SQLite.
   */
  keep(): Promise<void>;
}

/** A request's attempts: what PostgreSQL fetched is kept while the request stays in one transaction. */
export function readAttempts(db: Db): ReadAttempts {
  if (db.backend === 'sqlite') {
    // In a caller's transaction the staged points were folded before it began (settleReads): a fold there could not
    // commit on its own, and in a read snapshot it would fail once the worker had committed since.
    return {
      run: (tx, attempt) => tx.exclusive((conn) => { if (!tx.inTransaction) settleStaged(conn); return onConnection(conn, attempt); }),
      keep: () => Promise.resolve(),
    };
  }
  const reads = new PgReads(db);
  let snapshot: Db | undefined;
  return {
    async run(tx, attempt) {
      // what an earlier transaction fetched may have changed since; catalogue rows kept between requests are used when
      // the snapshot saw their catalogue version (settledRead)
      if (tx !== snapshot) {
        reads.forget();
        reads.catalogueVersion(catalogueOfSnapshot.get(tx));
      }
      snapshot = tx;
      for (;;) {
        const result = attempt(reads);
        if (!reads.lacking) return result;
        await reads.fetch(tx);
      }
    },
    async keep() {
      const computed = reads.takeComputed();
      if (computed.length > 0 && !db.inTransaction) await storeBlockStats(db, computed);
    },
  };
}

/**
 * Every staged point in its shard table (SQLite: staging.ts; PostgreSQL: pg/pg-staging.ts), before a read snapshot of
 * telemetry begins.
 */
export async function settleReads(db: Db): Promise<void> {
  if (db.inTransaction) return;
  if (db.backend === 'sqlite') await db.exclusive(settleStaged);
  else await settleStagedPg(db);
}

/**
 * Runs `attempt` in one read snapshot (one consistent state, even while a `telemetry prune` drops tables in another
 * process): SQLite in a read transaction of its exclusive section, PostgreSQL in a REPEATABLE READ transaction.
 */
export function inReadSnapshot<T>(db: Db, attempt: (reads: TelemetryReads) => T): Promise<T> {
  if (db.backend === 'sqlite') return db.exclusive((conn) => { settleStaged(conn); return conn.snapshot(() => onConnection(conn, attempt)); });
  return pgReadSnapshot(db, attempt);
}

async function pgReadSnapshot<T>(db: Db, attempt: (reads: TelemetryReads) => T): Promise<T> {
  if (!db.inTransaction) {
    const quick = await inOneStatement(db, attempt);
    if (quick.done) return quick.result;
    // the batches staged before it are folded once: the snapshot below then usually finds none
    if (quick.staged !== undefined) await foldStaged(db, quick.staged);
  }
  const attempts = readAttempts(db);
  const result = await settledRead(db, (tx) => attempts.run(tx, attempt));
  await attempts.keep();
  return result;
}

type Quick<T> = { done: true; result: T } | { done: false; staged?: StagedThrough[] };

/**
 * The usual PostgreSQL read in one round trip: the attempt runs over the catalogue rows kept under the version last
 * seen, and what it lacks is fetched by one statement outside a transaction (one snapshot) that also reads the
 * snapshot state (PgReads.fetchWithState). The answer stands when that state is the one assumed — nothing staged, the
 * same catalogue version — and the attempt then lacks nothing more: the same answer a read snapshot begun by
 * settledRead gives, two round trips sooner (its BEGIN with the state, and the fetch). Anything else — more than one
 * kind of read lacking, batches staged (returned, to be folded), another catalogue version, a failed statement (a
 * shard table pruned meanwhile) — falls back to the read snapshot, which decides.
 */
async function inOneStatement<T>(db: Db, attempt: (reads: TelemetryReads) => T): Promise<Quick<T>> {
  const reads = readsOnKeptCatalogue(db);
  if (reads === undefined) return { done: false };
  const version = reads.assumedVersion;
  try {
    let result = attempt(reads);
    const lacked = reads.lacking;
    const state = lacked ? await reads.fetchWithState(db) : await snapshotState(db);
    if (state === undefined) return { done: false };
    if (state.staged.length > 0) return { done: false, staged: state.staged };
    if (state.catalogue !== version) return { done: false };
    if (lacked) {
      result = attempt(reads);
      if (reads.lacking) return { done: false };
    }
    const computed = reads.takeComputed();
    if (computed.length > 0) await storeBlockStats(db, computed);
    return { done: true, result };
  } catch {
    return { done: false };
  }
}

/**
 * `attempt` over the catalogue rows PostgreSQL keeps under the version last seen, without a round trip: its result
 * when it lacked nothing; undefined when it lacked something or failed, on SQLite, inside a transaction, and before
 * any read kept rows. Nothing checks the version here: for planning only (an InfluxQL request's charge and the
 * nodeIds whose rights to check, influxql/execute.ts), never for an answer.
 */
export function onKeptCatalogue<T>(db: Db, attempt: (reads: TelemetryReads) => T): T | undefined {
  if (db.backend === 'sqlite' || db.inTransaction) return undefined;
  const reads = readsOnKeptCatalogue(db);
  if (reads === undefined) return undefined;
  try {
    const result = attempt(reads);
    return reads.lacking ? undefined : result;
  } catch {
    return undefined;
  }
}

/** The catalogue version a PostgreSQL read snapshot saw in its first statement (settledRead), by its handle. */
const catalogueOfSnapshot = new WeakMap<Db, number>();

/**
 * `read` in a read snapshot that holds every telemetry batch staged before it (settleReads' promise) in one round trip
 * less: on PostgreSQL the snapshot's first statement asks what is staged (with its BEGIN), and when nothing is, that
 * snapshot is the one to read; else the batches it saw are folded and `read` runs in a new snapshot. Outside a
 * caller's transaction; inside one (and on SQLite) settleReads, then `db.read`.
 */
export async function settledRead<T>(db: Db, read: (tx: Db) => Promise<T>): Promise<T> {
  if (db.backend === 'sqlite' || db.inTransaction) {
    await settleReads(db);
    return db.read(read);
  }
  // A snapshot holds its catalogue rows, not the tables they name: a shard table dropped meanwhile (sealed, pruned) by
  // a commit after the snapshot began is missing from it. The read is made again in a new snapshot, which no longer
  // names the table.
  for (let attempt = 1; ; attempt++) {
    try {
      return await settledReadPg(db, read);
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNDEFINED_TABLE || attempt >= READ_ATTEMPTS) throw err;
    }
  }
}

/** PostgreSQL's undefined_table, and how many snapshots a read may need while tables are dropped under it. */
const UNDEFINED_TABLE = '42P01';
const READ_ATTEMPTS = 4;

async function settledReadPg<T>(db: Db, read: (tx: Db) => Promise<T>): Promise<T> {
  // the snapshot's first statement: what is staged, and the catalogue version its reads may use kept rows of
  const begin = async (tx: Db): Promise<StagedThrough[]> => {
    const { staged, catalogue } = await guardedSnapshotState(tx);
    if (catalogue !== undefined) catalogueOfSnapshot.set(tx, catalogue);
    return staged;
  };
  const first = await db.read(async (tx): Promise<{ staged: StagedThrough[] } | { staged: undefined; result: T }> => {
    const staged = await begin(tx);
    return staged.length > 0 ? { staged } : { staged: undefined, result: await read(tx) };
  });
  if (first.staged === undefined) return first.result;
  await foldStaged(db, first.staged);
  // the new snapshot holds the batches seen; what was staged since is not waited for (it came after the read began)
  return db.read(async (tx) => {
    await begin(tx);
    return read(tx);
  });
}

/** An attempt on the SQLite connection, inside an exclusive section: the catalogue synced first. */
function onConnection<T>(conn: SqliteConnection, attempt: (reads: TelemetryReads) => T): T {
  const catalogue = catalogueOf(conn);
  catalogue.sync();
  return attempt(sqliteReads(conn, catalogue));
}
