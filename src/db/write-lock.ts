// Who of two threads may open a write transaction on the SQLite file: the main thread (every request's writes) or the
// telemetry fold worker (src/telemetry/fold-worker.ts, moving staged points into their shard tables). SQLite allows
// one writer at a time and makes the other wait in its busy handler, which sleeps in steps of 1 ms and more and favours
// nobody; the main thread sleeping there would stop the event loop. This lock, in memory both threads share, gives the
// main thread priority instead: it says it wants the lock, the worker gives it up after the statement it is running
// (its transactions are small: one fold slice), and the main thread waits only that long, never for another slice.
//
// Layout: two Int32 cells, HOLDER (FREE, MAIN or WORKER) and WANTED (1 while the main thread waits). The main side is
// re-entrant (a transaction inside an exclusive section that already holds it).

const HOLDER = 0;
const WANTED = 1;
const FREE = 0;
const MAIN = 1;
const WORKER = 2;
/** longer than a fold slice can take, SQLite's busy timeout (5 s) included */
const STEAL_MS = 15_000;

export class WriteLock {
  readonly cells: Int32Array;
  private depth = 0;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.cells = new Int32Array(buffer);
  }

  /**
   * Main thread: takes the lock, waiting (blocking) for the worker to end its current statement and slice. Re-entrant.
   * A worker that does not give it up within STEAL_MS (it died holding it) loses it: the lock only orders the two
   * threads, SQLite's own locking still keeps their transactions apart.
   */
  hold(): void {
    if (this.depth++ > 0) return;
    const c = this.cells;
    if (Atomics.compareExchange(c, HOLDER, FREE, MAIN) === FREE) return;
    Atomics.store(c, WANTED, 1);
    const until = Date.now() + STEAL_MS;
    while (Atomics.compareExchange(c, HOLDER, FREE, MAIN) !== FREE) {
      if (Date.now() > until) {
        Atomics.store(c, HOLDER, MAIN);
        break;
      }
      Atomics.wait(c, HOLDER, WORKER, 50);
    }
    Atomics.store(c, WANTED, 0);
  }

  /** Main thread: gives the lock back (the outermost release only). */
  release(): void {
    if (this.depth === 0 || --this.depth > 0) return;
    Atomics.store(this.cells, HOLDER, FREE);
    Atomics.notify(this.cells, HOLDER);
  }

  /**
   * Worker: takes the lock once the main thread neither holds nor wants it (blocking the worker meanwhile); false
   * without it when `giveUp()` says so first.
   */
  take(giveUp: () => boolean): boolean {
    const c = this.cells;
    for (;;) {
      if (Atomics.load(c, WANTED) === 0 && Atomics.compareExchange(c, HOLDER, FREE, WORKER) === FREE) return true;
      if (giveUp()) return false;
      const holder = Atomics.load(c, HOLDER);
      if (holder === MAIN) Atomics.wait(c, HOLDER, MAIN, 50);
      else Atomics.wait(c, WANTED, 1, 1);
    }
  }

  /** Worker: whether the main thread waits for the lock (end the slice). */
  wanted(): boolean {
    return Atomics.load(this.cells, WANTED) === 1;
  }

  /** Worker: gives the lock back. */
  give(): void {
    Atomics.store(this.cells, HOLDER, FREE);
    Atomics.notify(this.cells, HOLDER);
  }
}
