// Heavy telemetry reads off the event loop (docs/api.md#telemetry-blocks): a query whose estimate is large (a raw week
// of a device, a month of aggregates) is answered by a read worker, a thread with its own connection — SQLite: the
// file read-only (WAL lets it read beside the writer); PostgreSQL: a small pool of its own — which plans, checks
// rights, reads and decodes blocks and writes the whole JSON answer; the main thread, having charged the request, only
// hands it the bytes to send. Light queries stay on the main thread, where the hop would cost more than the answer.
// Once they are sent (answerSent), the bytes' buffer goes back to the worker, which writes its next answers into it:
// a buffer left to the main thread's collector stays allocated, on the worker's side of the C heap, until V8 notices
// tens of MB of them, and the worker allocates a new one for every answer meanwhile.
//
// A request is answered from one snapshot of the worker's connection, as on the main thread; points acknowledged
// before the request are folded first (settleReads). The worker is started on first use and ends with the database.
import { Worker } from 'node:worker_threads';
import type { Db } from '../db/open.ts';
import type { Logger } from '../lib/logger.ts';
import { WORKER_LIMITS } from '../lib/worker-heap.ts';
import readWorkerSource from 'gridkeeper:read-worker';
import { settleReads } from './reads.ts';

/** Estimated datapoints from which a read goes to the worker: about a day of one series at 10 s. */
export const HEAVY_DATAPOINTS = 8_640;

/** What a read worker answers: a whole query request, as JSON bytes. */
export type ReadTask =
  | { kind: 'influxql'; request: unknown; statements: unknown; epoch: string | undefined }
  | { kind: 'json'; userId: number; body: unknown; nowMs: number };

/** The worker's own connection: the SQLite file (read-only), or the PostgreSQL database (a pool of its own). */
export type ReadWorkerData = { file: string; addonFile: string } | { databaseUrl: string; poolSize: number };

/** the worker each answer's bytes came from, until they are sent */
const answers = new WeakMap<Uint8Array, ReadWorker>();

/** PostgreSQL connections of a node's read worker */
const WORKER_POOL = 2;

let log: Logger | undefined;
/** requests answered by read workers in this process (/metrics) */
let answered = 0;

export function readWorkerAnswers(): number {
  return answered;
}

/** Where a worker that fails reports (the service's log). */
export function logReadWorkersTo(logger: Logger): void {
  log = logger;
}

class ReadWorker {
  private worker: Worker | undefined;
  private next = 0;
  private readonly pending = new Map<number, { resolve: (bytes: Uint8Array<ArrayBuffer>) => void; reject: (err: Error) => void }>();

  constructor(data: ReadWorkerData) {
    const worker = new Worker(readWorkerSource, { eval: true, workerData: data, resourceLimits: WORKER_LIMITS });
    worker.unref();
    worker.on('message', (m: { id: number; bytes?: Uint8Array<ArrayBuffer>; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.bytes !== undefined) p?.resolve(m.bytes);
      else p?.reject(new Error(`read worker: ${m.error}`));
      if (this.pending.size === 0) worker.unref();
    });
    const gone = (why: string) => {
      this.worker = undefined;
      for (const p of this.pending.values()) p.reject(new Error(why));
      this.pending.clear();
    };
    worker.on('error', (err) => {
      log?.error('telemetry read worker failed; heavy reads are answered on the main thread', { error: String(err) });
      gone(`read worker failed: ${String(err)}`);
    });
    worker.on('exit', () => gone('read worker stopped'));
    this.worker = worker;
  }

  get alive(): boolean {
    return this.worker !== undefined;
  }

  run(task: ReadTask): Promise<Uint8Array<ArrayBuffer>> {
    const worker = this.worker;
    if (worker === undefined) return Promise.reject(new Error('read worker stopped'));
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref(); // a request waits for it
      worker.postMessage({ id, task });
    });
  }

  /** Hands an answer's buffer back, once sent, for the worker's next answers. */
  giveBack(bytes: Uint8Array<ArrayBuffer>): void {
    this.worker?.postMessage({ spare: bytes.buffer }, [bytes.buffer]);
  }

  async stop(): Promise<void> {
    await this.worker?.terminate();
  }
}

/** by the connection's better-sqlite3 handle; null: no worker here (in memory, read-only, no addon file) */
const workers = new WeakMap<object, ReadWorker | null>();

/** PostgreSQL databases whose heavy reads go to a read worker (readWorkersOn), the worker started on first use. */
const pgWorkers = new WeakMap<Db, { url: string; worker?: ReadWorker }>();

/**
 * PostgreSQL: heavy reads of `db` (a service's) go to a read worker with its own connections to `url`; the returned
 * function stops it. (SQLite needs no call: a file's worker starts on first use and stops with the database.)
 */
export function readWorkersOn(db: Db, url: string): () => Promise<void> {
  const entry: { url: string; worker?: ReadWorker } = { url };
  pgWorkers.set(db, entry);
  return async () => {
    pgWorkers.delete(db);
    await entry.worker?.stop();
  };
}

async function workerOf(db: Db): Promise<ReadWorker | undefined> {
  if (db.inTransaction) return undefined;
  if (db.backend === 'postgres') {
    const entry = pgWorkers.get(db);
    if (entry === undefined) return undefined;
    if (entry.worker === undefined) {
      try {
        entry.worker = new ReadWorker({ databaseUrl: entry.url, poolSize: WORKER_POOL });
      } catch (err) {
        log?.error('telemetry read worker could not start; heavy reads are answered on the main thread', { error: String(err) });
        pgWorkers.delete(db);
        return undefined;
      }
    }
    return entry.worker.alive ? entry.worker : undefined;
  }
  return db.exclusive((conn) => {
    let w = workers.get(conn.sqlite);
    if (w === undefined) {
      const file = conn.file;
      w = null;
      if (file?.addonFile !== undefined && !conn.sqlite.readonly) {
        try {
          w = new ReadWorker({ file: file.path, addonFile: file.addonFile });
          const started = w;
          conn.atClose(() => started.stop());
        } catch (err) {
          log?.error('telemetry read worker could not start; heavy reads are answered on the main thread', { error: String(err) });
        }
      }
      workers.set(conn.sqlite, w);
    }
    return w?.alive === true ? w : undefined;
  });
}

/**
 * Whether heavy reads of this database may go to a read worker: SQLite in a file, writable (not in memory); PostgreSQL
 * once readWorkersOn named its URL.
 */
export function mayAnswerInWorker(db: Db): boolean {
  if (db.backend === 'postgres') return pgWorkers.has(db);
  return !db.sqlite.memory && !db.sqlite.readonly;
}

/**
 * The answer of a heavy request (`datapoints` estimated) from a read worker, as JSON bytes; undefined when it is to be
 * answered here: a light request, a database in memory, PostgreSQL without readWorkersOn, or no worker running.
 */
export async function answerInWorker(db: Db, datapoints: number, task: ReadTask): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (datapoints < HEAVY_DATAPOINTS) return undefined;
  const worker = await workerOf(db);
  if (worker === undefined) return undefined;
  await settleReads(db);
  const bytes = await worker.run(task);
  answered++;
  answers.set(bytes, worker);
  return bytes;
}

/**
 * After the answer's bytes were written to the connection (its response's 'finish'): a worker's answer gives its
 * buffer back (see above); anything else is left alone. The bytes must not be read after.
 */
export function answerSent(bytes: Uint8Array<ArrayBuffer> | string): void {
  if (typeof bytes === 'string') return;
  const worker = answers.get(bytes);
  if (worker === undefined) return;
  answers.delete(bytes);
  worker.giveBack(bytes);
}
