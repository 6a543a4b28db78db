// The fold worker: a thread with its own connection to the SQLite file that moves staged telemetry points
// (telemetry_staged, written by the requests that acknowledged them) into their shard tables, so the B-tree inserts
// of a write run on the second core instead of in the request (staging.ts says why and how it is coordinated).
//
// It also seals closed windows into blocks (seal.ts) when asked, after folding what is staged for them. Where the
// service seals on a timer, each kick carries its clock: staged points of windows already due then go straight into
// their blocks (seal-staged.ts), and the windows so emptied are sealed right after.
//
// Bundled on its own (src/build/esbuild-plugins.mjs, `gridkeeper:fold-worker`) and started from its text: it imports only
// better-sqlite3, the shared rows code, the sealing code with its codecs and the write lock. Messages in: 'kick' or
// { kick: nowMs } (something is staged: sent after each write, and at start when an earlier process left points
// staged), { seal: nowMs, id } (seal what is due), 'stop'. Messages out: { error } after a failed
// slice (retried later), { sealed: SealStep } after each sealing transaction, { sealDone: id, error? } at the end.
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { WriteLock } from '../../db/write-lock.ts';
import { foldStaged, statementCache } from './shard-rows.ts';
import { giveBackPages, sealStep } from './seal.ts';
import { prepareStagedSeal, storeStagedSeal, type FoldWindow } from './seal-staged.ts';
import { collectAfterWork } from '../../lib/worker-heap.ts';

export interface FoldWorkerData {
  file: string;
  addonFile: string;
  lock: SharedArrayBuffer;
  /** Int32 cells: [0] pending entries (main adds, both subtract), [1] 1 = stop, [2] 1 while staged points go straight into blocks */
  control: SharedArrayBuffer;
}

/** Rows per fold transaction at most, when the main thread does not want the lock sooner. */
const SLICE_ROWS = 4096;
/** Points per sealing transaction at most (whole series: a series' points of a window are sealed at once). */
const SEAL_POINTS = 20_000;
const RETRY_MS = 1000;
/**
 * Staged entries of due windows let gather before they are sealed straight into blocks, while writes keep coming
 * (each such sealing rewrites the blocks it touches whole: in slices of what a few writes staged, a day's block of a
 * month loaded at once was rewritten ~8 times), up to what writes let stage before they wait (staging.ts).
 */
const GATHER_ENTRIES = 80;
/** ...or until no write came for this long */
const GATHER_MS = 50;
/** ~5,000 pages of WAL: half the main connection's wal_autocheckpoint (src/db/open.ts) */
const CHECKPOINT_BYTES = 5000 * 4096;
/** at most one full collection a second once the staged rows are folded (lib/worker-heap.ts): writes kick it often */
const COLLECT_INTERVAL_MS = 1000;

function main(): void {
  const data = workerData as FoldWorkerData;
  const addon = { exports: {} as object };
  process.dlopen(addon, data.addonFile);
  const db = new Database(data.file, { nativeBinding: addon.exports as unknown as string });
  // The folds change no acknowledged data (the points were durable once staged), so their commits skip the fsync: a
  // fold lost to a power cut is done again from the staged rows it would have deleted. Checkpoints still sync.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -8000');
  // Checkpoints run here after a slice, outside the write lock (a COMMIT that checkpointed would hold it for the whole
  // checkpoint: 40 MB written and synced), at half the main connection's threshold, so under telemetry load they are
  // the worker's and not the event loop's.
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('journal_size_limit = 67108864');
  const wal = `${data.file}-wal`;
  const walBytes = () => {
    try {
      return statSync(wal).size;
    } catch {
      return 0;
    }
  };
  const lock = new WriteLock(data.lock);
  const control = new Int32Array(data.control);
  // foldStaged's own three statements
  const prepared = new Map<string, Statement>();
  const prepare = (sqlText: string): Statement => {
    let stmt = prepared.get(sqlText);
    if (stmt === undefined) prepared.set(sqlText, stmt = db.prepare(sqlText));
    return stmt;
  };
  // the upserts in a bounded cache of their own (one per shard table and shape: the tables come and go with the days)
  const statements = statementCache((sqlText) => db.prepare(sqlText));
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const stopping = () => Atomics.load(control, 1) === 1;
  /** cancels the drain scheduled (schedule), if one is */
  let timer: (() => void) | undefined;
  function schedule(ms: number | 'now'): void {
    if (ms === 'now') {
      const immediate = setImmediate(drain);
      timer = () => clearImmediate(immediate);
    } else {
      const timeout = setTimeout(drain, ms);
      timer = () => clearTimeout(timeout);
    }
  }
  /** the service's clock at the last kick that gave it: windows due then take their staged points straight into blocks */
  let dueAt: number | undefined;
  /** when the last kick came (this thread's clock), and whether the timer set is a wait for more entries */
  let lastKick = 0;
  let gatherWait = false;
  /** staged points went straight into blocks since the last sealing pass: their emptied windows are sealed next */
  let emptied = false;

  /**
   * Seals the oldest staged entries of a due window straight into blocks; returns how many (0: none, or they changed
   * meanwhile), 'gather' when the window may still grow (prepareStagedSeal) and more writes are coming, or the window
   * whose entries are to be folded instead.
   */
  function sealStaged(nowMs: number, force: boolean): number | 'gather' | FoldWindow {
    const now = force || Atomics.load(control, 0) >= GATHER_ENTRIES || performance.now() - lastKick >= GATHER_MS;
    let prepared;
    try {
      db.exec('BEGIN');
      prepared = prepareStagedSeal(db, nowMs, now);
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) rollback.run();
      parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
      return 0;
    }
    if (prepared === 'gather' || (prepared !== undefined && 'fold' in prepared)) return prepared;
    if (prepared === undefined || !lock.take(stopping)) return 0;
    let stored = false;
    try {
      begin.run();
      stored = storeStagedSeal(db, prepared);
      commit.run();
    } catch (err) {
      if (db.inTransaction) rollback.run();
      parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
      return 0;
    } finally {
      lock.give();
    }
    if (!stored) return 0;
    parentPort!.postMessage({ sealed: prepared.step });
    return prepared.ids.length;
  }

  function stop(): void {
    timer?.();
    db.close();
    process.exit(0);
  }

  /**
   * Folds slice after slice until nothing is staged (or it is told to stop). Staged points sealed straight into blocks
   * end it early, to take in the messages come meanwhile, and a window still gathering puts it off; `whole`: neither
   * (before a sealing pass, which wants nothing left staged).
   */
  function drain(whole = false): void {
    timer?.();
    timer = undefined;
    gatherWait = false;
    while (Atomics.load(control, 0) > 0 && !stopping()) {
      const direct = dueAt === undefined ? 0 : sealStaged(dueAt, whole);
      // the writes wait for this thread while it seals straight (a fold of theirs would send the window the long way)
      Atomics.store(control, 2, direct === 0 || typeof direct === 'object' ? 0 : 1);
      if (direct === 'gather') {
        gatherWait = true;
        schedule(GATHER_MS);
        collectAfterWork(COLLECT_INTERVAL_MS);
        return;
      }
      if (typeof direct === 'number' && direct > 0) {
        Atomics.sub(control, 0, direct);
        emptied = true;
        if (walBytes() >= CHECKPOINT_BYTES) db.pragma('wal_checkpoint(PASSIVE)');
        if (whole) continue;
        // the kicks that came meanwhile wait in the message queue: they are taken in (lastKick) before the next slice
        schedule('now');
        collectAfterWork(COLLECT_INTERVAL_MS);
        return;
      }
      if (!lock.take(stopping)) break;
      let folded = { entries: 0, rows: 0 };
      try {
        begin.run();
        folded = foldStaged({ prepare }, statements, (rows) => rows >= SLICE_ROWS || lock.wanted() || stopping(),
          typeof direct === 'object' ? direct.fold : undefined);
        commit.run();
      } catch (err) {
        if (db.inTransaction) rollback.run();
        lock.give();
        parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
        schedule(RETRY_MS);
        return;
      }
      lock.give();
      Atomics.sub(control, 0, folded.entries);
      if (walBytes() >= CHECKPOINT_BYTES) db.pragma('wal_checkpoint(PASSIVE)');
      // nothing left although the count says otherwise (the main thread folded some itself): wait for the next kick
      if (folded.rows === 0 && folded.entries === 0) break;
    }
    if (stopping()) stop();
    // the windows emptied above are sealed now rather than at the next pass of the service's timer
    if (emptied && dueAt !== undefined && !stopping()) {
      emptied = false;
      const error = sealDue(dueAt);
      if (error !== undefined) parentPort!.postMessage({ error });
    }
    collectAfterWork(COLLECT_INTERVAL_MS);
  }

  /** Seals every window due at `nowMs`, a transaction at a time; folds first (a window with staged points waits). */
  function seal(nowMs: number, id: number): void {
    drain(true);
    const error = sealDue(nowMs);
    parentPort!.postMessage({ sealDone: id, error });
    if (stopping()) stop();
    collectAfterWork(COLLECT_INTERVAL_MS);
  }

  /** Seals every window due at `nowMs`, a transaction at a time; returns the error that stopped it, if any. */
  function sealDue(nowMs: number): string | undefined {
    let error: string | undefined;
    let dropped = false;
    while (!stopping()) {
      if (!lock.take(stopping)) break;
      let step;
      try {
        begin.run();
        step = sealStep(db, nowMs, (points) => points >= SEAL_POINTS || lock.wanted() || stopping());
        commit.run();
      } catch (err) {
        if (db.inTransaction) rollback.run();
        error = err instanceof Error ? err.message : String(err);
        break;
      } finally {
        lock.give();
      }
      if (step === undefined) break;
      dropped ||= step.done;
      parentPort!.postMessage({ sealed: step });
      if (walBytes() >= CHECKPOINT_BYTES) db.pragma('wal_checkpoint(PASSIVE)');
    }
    if (dropped && error === undefined && !stopping() && lock.take(stopping)) {
      try {
        giveBackPages(db);
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      } finally {
        lock.give();
      }
    }
    return error;
  }

  parentPort!.on('message', (message: unknown) => {
    if (message === 'stop' || stopping()) stop();
    else if (message === 'kick' || (typeof message === 'object' && message !== null && 'kick' in message)) {
      if (typeof message === 'object') dueAt = (message as { kick: number }).kick;
      lastKick = performance.now();
      // Drained once every message waiting has been taken in (a worker that started late finds several kicks queued);
      // at once when enough gathered.
      if (gatherWait && Atomics.load(control, 0) >= GATHER_ENTRIES) {
        timer?.();
        schedule('now');
      } else if (timer === undefined) schedule('now');
    }
    else if (typeof message === 'object' && message !== null && 'seal' in message) {
      const { seal: nowMs, id } = message as { seal: number; id: number };
      seal(nowMs, id);
    }
  });
}

main();
