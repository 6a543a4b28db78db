// Group commit: the one way every write of the HTTP API reaches the database (Db.write). The database fsyncs on every
// commit (synchronous=FULL: a 2xx survives power loss), which costs milliseconds, far more than the work of a PATCH.
// Units of work that arrive in the same turn of the event loop therefore run one after another in ONE transaction and
// share its commit:
// - each unit runs in its own savepoint, so it stays all-or-nothing: a unit that throws is rolled back alone and its
//   caller gets the error, the others are unaffected;
// - units run in arrival order, each awaited before the next starts, so each sees the writes of the units before it
//   (a check-then-write such as If-Unmodified-Since still lets exactly one of N racing writers win);
// - the transaction holds the connection from BEGIN to COMMIT, so no other request reads uncommitted data;
// - every caller's promise settles only after the commit returned: a success answer still means durable.
// The same batching serves PostgreSQL (postgres.ts): the units of one turn share one SERIALIZABLE transaction and one
// commit there too — no two units of one process conflict, and the server's fsync is paid once per batch.
// (A telemetry write keeps a transaction of its own: it is already a batch of thousands of points, and its in-memory
// catalogue must be reset exactly when that transaction rolls back.)

/** A transaction handle that can run a unit in a savepoint of its transaction (Db.tx on a transaction handle). */
export interface Savepoints<H> {
  tx<T>(unit: (tx: H) => Promise<T>): Promise<T>;
}

/** Runs body in a new transaction, committing when it returns (Db.tx on the root handle). */
export type Transact<H> = <T>(body: (tx: H) => Promise<T>) => Promise<T>;

export interface GroupCommit<H> {
  /** Runs `unit` (it may throw) in the next batch; settles after that batch's commit. */
  run<T>(unit: (tx: H) => Promise<T>): Promise<T>;
}

interface Job<H> {
  unit: (tx: H) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Bounds the work done in one transaction; the rest goes to the next batch. */
const MAX_BATCH = 256;

export interface GroupCommitOptions {
  /**
   * An error of a unit that dooms the whole batch's transaction rather than the unit alone (PostgreSQL: a
   * serialization failure or deadlock): it is rethrown, so the transaction runs again with every unit.
   */
  abortsBatch?: (error: unknown) => boolean;
}

export function groupCommit<H extends Savepoints<H>>(transact: Transact<H>, options: GroupCommitOptions = {}): GroupCommit<H> {
  let queue: Job<H>[] = [];
  let scheduled = false;
  // One batch at a time: units arriving while a batch commits wait for the next one (and share its commit). On SQLite
  // the connection orders batches anyway; on PostgreSQL two batches of one process would otherwise conflict.
  let previous: Promise<void> = Promise.resolve();

  async function flush(): Promise<void> {
    scheduled = false;
    const jobs = queue.slice(0, MAX_BATCH);
    queue = queue.slice(jobs.length);
    if (queue.length > 0) schedule();
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await transact(async (tx) => {
        // a transaction may be run again (PostgreSQL retries a serialization failure): each run starts afresh
        outcomes.length = 0;
        for (const job of jobs) {
          try {
            outcomes.push({ ok: true, value: await tx.tx(job.unit) }); // a savepoint
          } catch (error) {
            if (options.abortsBatch?.(error)) throw error;
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // BEGIN or COMMIT failed: nothing of this batch is stored, every unit fails with that error
      jobs.forEach((job) => job.reject(error));
      return;
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      // the batch is taken when its turn comes, so it holds every unit that arrived meanwhile
      previous = previous.then(() => (scheduled ? flush() : undefined)).catch(() => {});
    });
  }

  return {
    run<T>(unit: (tx: H) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ unit, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}
