// Staged telemetry writes (SQLite in a file). Inserting points into the shard tables' B-trees is most of a write's
// time; so that it does not hold the event loop, a write request stores them, sorted, as a few
// compact rows of telemetry_staged (one per shard table, measurement and 1,024 points) in its transaction, which is
// fsynced before the answer as every write is: an acknowledged point is durable. The fold worker
// (fold-worker.ts), a thread with its own connection, then moves them into their shard tables on the other core.
//
// What stays true:
// - A read sees every acknowledged point: before a telemetry read runs, whatever is still staged is folded on the
//   main thread first (settle), in one transaction, so a query right after a write waits for at most that.
// - Each staged row is folded once, in the same transaction that deletes it, by whichever thread gets to it first;
//   the two threads' write transactions take turns through the write lock (src/db/write-lock.ts), the main thread's
//   first, so a request never waits for more than one fold slice.
// - Nothing is lost across a crash or a restart: the staged rows are folded by the next process that opens the file
//   for writing (the worker at start, or the first read), by `gridkeeper copy` before it reads the shard tables, and
//   `telemetry prune` deletes those of the tables it drops.
// Without a worker (a database in memory, a read-only file, a thread that could not start), writes insert their rows
// directly as before.
import { Worker } from 'node:worker_threads';
import type { SqliteConnection } from '../../db/open.ts';
import type { Db } from '../../db/open.ts';
import type { Logger } from '../../lib/logger.ts';
import { WORKER_LIMITS } from '../../lib/worker-heap.ts';
import { foldStaged, STAGED_TABLE_SQL, statementCache } from './shard-rows.ts';
import { noteSealed, type SealStep } from './seal-progress.ts';
import foldWorkerSource from 'gridkeeper:fold-worker';
import type { FoldWorkerData } from './fold-worker.ts';

const PENDING = 0;
const STOP = 1;
/** 1 while the worker seals staged points straight into blocks (fold-worker.ts), 0 while it folds them */
const STRAIGHT = 2;
/**
 * Entries staged and not folded (up to ~130,000 points) beyond which a write first folds a slice itself, on the main
 * thread, before it stages: writes that outrun the worker are slowed down to what both threads fold, and what a read
 * may have to fold, like the disk the staged rows take, stays bounded.
 */
const MAX_BACKLOG = 32;
/**
 * The same bound where staged points of due windows are sealed straight into blocks (sealStagedWhenDue): the worker
 * lets a window's entries gather while writes come, up to 80 (fold-worker.ts GATHER_ENTRIES), and seals them in slices
 * of up to 100,000 points (seal-staged.ts SLICE_ROWS).
 */
const MAX_BACKLOG_SEALING = 96;
/** rows per fold transaction on the main thread */
const SLICE_ROWS = 4096;

let log: Logger | undefined;

/**
 * A worker with nothing staged and no sealing asked of it for this long stops; the next write or due sealing starts
 * another. Its thread's V8 heap goes with it; the C allocator keeps the thread's arena for the next thread that starts
 * (bench/README.md).
 */
let idleMs = 5_000;

/** How long a fold worker may be idle before it stops (above); tests shorten it. Applies to stagings started after; returns the setting before. */
export function setFoldWorkerIdle(ms: number): number {
  const before = idleMs;
  idleMs = ms;
  return before;
}

class Staging {
  private worker: Worker | undefined;
  private readonly control = new Int32Array(new SharedArrayBuffer(12));
  private failed = false;
  private stopped: Promise<void> | undefined;
  /** an idle worker's stop under way (sleep), and whether something came meanwhile that wants a worker after it */
  private sleeping: Promise<void> | undefined;
  private wake = false;
  /** when the worker last had something to do (performance.now()) */
  private lastWork = 0;
  private readonly idleCheck: ReturnType<typeof setInterval>;
  private readonly idleMs: number;
  /** sealings asked of the worker, by id: called with an error or nothing when it is done */
  private readonly sealings = new Map<number, (error?: string) => void>();
  private nextSealing = 0;

  constructor(private readonly conn: SqliteConnection, private readonly file: NonNullable<SqliteConnection['file']> & { addonFile: string }) {
    conn.sqlite.exec(STAGED_TABLE_SQL);
    this.control[PENDING] = conn.prepare('SELECT count(*) FROM telemetry_staged').pluck().get() as number;
    this.start();
    this.idleMs = idleMs;
    this.idleCheck = setInterval(() => this.sleepIfIdle(), Math.max(10, this.idleMs / 2));
    this.idleCheck.unref();
    conn.atClose(() => this.stop());
    // what an earlier process left staged is folded at once
    if (this.control[PENDING] > 0) this.kick();
  }

  private start(): Worker {
    Atomics.store(this.control, STOP, 0);
    this.lastWork = performance.now();
    const workerData: FoldWorkerData = {
      file: this.file.path, addonFile: this.file.addonFile, lock: this.file.writeLock.buffer, control: this.control.buffer as SharedArrayBuffer,
    };
    const worker = new Worker(foldWorkerSource, { eval: true, workerData, resourceLimits: WORKER_LIMITS });
    worker.unref();
    worker.on('message', (m: { error?: string; sealed?: SealStep; sealDone?: number }) => {
      // the end of a sealing pass is not work of its own: a pass that sealed nothing leaves the worker as idle as it was
      if (m.sealDone === undefined) this.lastWork = performance.now();
      if (m.sealed !== undefined) noteSealed(m.sealed);
      else if (m.sealDone !== undefined) {
        this.sealings.get(m.sealDone)?.(m.error);
        this.sealings.delete(m.sealDone);
        if (this.sealings.size === 0) worker.unref();
      } else if (m.error !== undefined) log?.warn('telemetry fold worker: a fold failed; it is tried again', { error: m.error });
    });
    worker.on('error', (err) => {
      log?.error('telemetry fold worker failed; telemetry writes go to the shard tables directly', { error: String(err) });
      this.failed = true;
      if (this.worker === worker) this.worker = undefined;
    });
    worker.on('exit', () => {
      if (this.worker !== worker && !this.failed) return;
      this.worker = undefined;
      if (this.sleeping !== undefined && !this.failed && this.stopped === undefined) {
        // stopped while idle: started again when something comes (or came meanwhile)
        this.sleeping = undefined;
        if (this.wake || this.backlog > 0) this.kick();
        this.wake = false;
        return;
      }
      // stopped, or gone: from now on writes go to the shard tables directly, after folding what is left
      this.failed = true;
      for (const done of this.sealings.values()) done('the fold worker stopped');
      this.sealings.clear();
    });
    this.worker = worker;
    return worker;
  }

  /** Stops the worker when it has had nothing to do for idleMs (see there); the next kick or sealing starts one. */
  private sleepIfIdle(): void {
    const worker = this.worker;
    if (worker === undefined || this.sleeping !== undefined || this.stopped !== undefined || this.failed) return;
    if (this.backlog > 0 || this.sealings.size > 0 || performance.now() - this.lastWork < this.idleMs) return;
    this.sleeping = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // a sealing asked meanwhile waits for the exit (seal): the process waits for it too
    worker.ref();
    this.tellStop(worker);
  }

  /** Asks the worker to stop after its current slice (it exits). */
  private tellStop(worker: Worker): void {
    Atomics.store(this.control, STOP, 1);
    worker.postMessage('stop');
  }

  /** Resolves once an idle stop under way is through (at once when there is none): `asleep` is then up to date. */
  idleStopped(): Promise<void> {
    return this.sleeping ?? Promise.resolve();
  }

  /** Whether the worker stopped while idle and has not been started again (sealing passes then ask first whether anything is due). */
  get asleep(): boolean {
    return this.worker === undefined && !this.failed && this.stopped === undefined;
  }

  /**
   * The running worker, started if it stopped while idle; undefined while an idle stop is under way (`wake` set) or when
   * stopped. `work`: something was staged (a sealing pass is not, unless it seals: see the worker's messages).
   */
  private running(work: boolean): Worker | undefined {
    if (work) this.lastWork = performance.now();
    if (this.worker !== undefined && this.sleeping === undefined) return this.worker;
    if (this.sleeping !== undefined) {
      this.wake = true;
      return undefined;
    }
    if (this.failed || this.stopped !== undefined) return undefined;
    try {
      return this.start();
    } catch (err) {
      log?.error('telemetry fold worker could not start again; telemetry writes go to the shard tables directly', { error: String(err) });
      this.failed = true;
      return undefined;
    }
  }

  /** Tells the worker something is staged (with the service's clock where staged points may be sealed, sealStagedWhenDue). */
  private kick(): void {
    const clock = sealClocks.get(this.conn.sqlite);
    this.running(true)?.postMessage(clock === undefined ? 'kick' : { kick: clock() });
  }

  /** Entries staged and not folded yet (as far as this process counted them). */
  get backlog(): number {
    return Math.max(0, Atomics.load(this.control, PENDING));
  }

  /** Whether writes may stage their points (a worker is there to fold them, or starts with the next kick). */
  get active(): boolean {
    return !this.failed;
  }

  /** Whether the worker is sealing staged points of due windows straight into blocks (sealStagedWhenDue) at present. */
  get sealingStraight(): boolean {
    return Atomics.load(this.control, STRAIGHT) === 1;
  }

  /** Whether the worker is so far behind that a write should wait for it or help before it stages (MAX_BACKLOG). */
  get behind(): boolean {
    return this.active && this.backlog >= (this.sealingStraight ? MAX_BACKLOG_SEALING : MAX_BACKLOG);
  }

  /**
   * A write's help when the worker is behind (inside an exclusive section): one slice folded here, when the staged rows
   * really are that many (the count can be too high: a `telemetry prune` of another process deleted some). Returns
   * whether it folded.
   */
  help(): boolean {
    const staged = this.conn.prepare('SELECT count(*) FROM telemetry_staged').pluck().get() as number;
    if (staged < MAX_BACKLOG) return false;
    Atomics.sub(this.control, PENDING, foldAll(this.conn, 1));
    return true;
  }

  /** After a write's commit: `entries` more are staged; the worker folds them (or seals them, seal-staged.ts). */
  committed(entries: number): void {
    if (entries === 0) return;
    Atomics.add(this.control, PENDING, entries);
    this.kick();
  }

  /** Folds what is still staged, here and now, when the worker failed (before a write, which then goes direct). */
  settleIfFailed(): void {
    if (this.failed) this.settle();
  }

  /** Folds what is still staged, here and now (before a read). */
  settle(): void {
    if (Atomics.load(this.control, PENDING) <= 0) return;
    Atomics.sub(this.control, PENDING, foldAll(this.conn));
  }

  /** Seals what is due at `nowMs` in the worker (after folding what is staged); resolves when it is done. */
  seal(nowMs: number): Promise<void> {
    const sleeping = this.sleeping;
    if (sleeping !== undefined) return sleeping.then(() => this.seal(nowMs));
    const worker = this.running(false);
    if (worker === undefined) return Promise.reject(new Error('the fold worker is not running'));
    const id = ++this.nextSealing;
    return new Promise((resolve, reject) => {
      this.sealings.set(id, (error) => (error === undefined ? resolve() : reject(new Error(error))));
      // the process waits for a sealing asked of it (the worker is unreferenced while idle)
      worker.ref();
      worker.postMessage({ seal: nowMs, id });
    });
  }

  /** Staged entries deleted unfolded (their tables were dropped). */
  forgot(entries: number): void {
    Atomics.sub(this.control, PENDING, entries);
  }

  /** Stops the worker after its current slice; what it did not fold stays staged. */
  stop(): Promise<void> {
    clearInterval(this.idleCheck);
    return (this.stopped ??= (async () => {
      await this.sleeping;
      const worker = this.worker;
      if (worker === undefined) {
        // stopped while idle: from now on writes go to the shard tables directly, as after the exit below
        this.failed = true;
        return;
      }
      await new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.ref(); // the process waits for it now
        this.tellStop(worker);
      });
    })());
  }
}

/** The service's clock, by connection handle, where it seals on a timer (seal.ts startSealing). */
const sealClocks = new WeakMap<object, () => number>();

/**
 * Staged points of windows due for sealing at `now()` go straight into their blocks (seal-staged.ts) from now on:
 * where sealing runs on a timer anyway, what it would seal next is not folded into a shard table first.
 */
export function sealStagedWhenDue(conn: SqliteConnection, now: () => number): void {
  sealClocks.set(conn.sqlite, now);
}

/** by the connection's better-sqlite3 handle (what the root Db shows too, for the metrics); null: none */
const stagings = new WeakMap<object, Staging | null>();

/** Staged entries not folded yet (0 without staging): the /metrics gauge. */
export function stagedEntries(sqlite: object): number {
  return stagings.get(sqlite)?.backlog ?? 0;
}

/** The connection's staging, started with its worker on first use; undefined where writes go to the shard tables directly. */
export function stagingOf(conn: SqliteConnection): Staging | undefined {
  let staging = stagings.get(conn.sqlite);
  if (staging === undefined) {
    const file = conn.file;
    staging = null;
    if (file?.addonFile !== undefined) {
      try {
        staging = new Staging(conn, { ...file, addonFile: file.addonFile });
      } catch (err) {
        log?.error('telemetry fold worker could not start; telemetry writes go to the shard tables directly', { error: String(err) });
      }
    }
    stagings.set(conn.sqlite, staging);
  }
  return staging ?? undefined;
}

/**
 * At start (the service's database): where to log the worker's failures, and the worker started at once when an
 * earlier process left points staged (else it starts with the first telemetry write).
 */
export async function startStaging(db: Db, logTo: Logger): Promise<void> {
  log = logTo;
  if (db.backend !== 'sqlite') return;
  await db.exclusive((conn) => {
    if (hasStagedTable(conn) && conn.prepare('SELECT 1 FROM telemetry_staged LIMIT 1').get() !== undefined) stagingOf(conn);
  });
}

/** Connections known to hold nothing staged but what their own staging knows of. */
const checked = new WeakSet<SqliteConnection>();

/** Before a telemetry read on this connection: every staged point in its shard table. */
export function settleStaged(conn: SqliteConnection): void {
  const staging = stagings.get(conn.sqlite);
  if (staging !== undefined && staging !== null) staging.settle();
  else if (!checked.has(conn)) {
    // staged by an earlier process: folded once here (a later write of this process starts a staging of its own)
    if (conn.file !== undefined) foldAll(conn);
    checked.add(conn);
  }
}

/** Inside the transaction that drops these shard tables: their staged points go too. */
export function forgetStaged(conn: SqliteConnection, tables: readonly string[]): void {
  if (tables.length === 0 || !hasStagedTable(conn)) return;
  const remove = conn.prepare('DELETE FROM telemetry_staged WHERE shard_table = ?');
  let entries = 0;
  for (const table of tables) entries += remove.run(table).changes;
  if (entries > 0) stagings.get(conn.sqlite)?.forgot(entries);
}

const hasStagedTable = (conn: SqliteConnection): boolean =>
  conn.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'telemetry_staged'").get() !== undefined;

/**
 * Folds every staged row (or `slices` slices of them) into its shard table on this connection, in transactions of at
 * most one slice each (the write lock is taken per transaction); returns how many entries were folded whole.
 */
export function foldAll(conn: SqliteConnection, slices = Infinity): number {
  if (!hasStagedTable(conn)) return 0;
  const statements = statementCache((sqlText) => conn.prepare(sqlText));
  // No fsync for these commits (outside a transaction only: the setting cannot change inside one): a fold changes no
  // acknowledged data, and one lost to a power cut is done again from the staged rows it would have deleted.
  const relaxed = !conn.sqlite.inTransaction;
  if (relaxed) conn.sqlite.pragma('synchronous = NORMAL');
  let total = 0;
  try {
    for (let slice = 0; slice < slices; slice++) {
      const folded = conn.transaction(() => foldStaged(conn, statements, (rows) => rows >= SLICE_ROWS));
      total += folded.entries;
      if (folded.entries === 0 && folded.rows === 0) break;
    }
    return total;
  } finally {
    if (relaxed) conn.sqlite.pragma('synchronous = FULL');
  }
}
