// The telemetry read worker (src/telemetry/read-workers.ts): a thread with its own connection (the SQLite file
// read-only, or a small PostgreSQL pool) that answers heavy query requests whole — InfluxQL (this door's) and JSON
// telemetry queries — as the main thread would, rights included, and hands back the answer's bytes. It lives beside
// the InfluxDB door because it runs both query languages.
//
// Bundled on its own (src/build/esbuild-plugins.mjs, `gridkeeper:read-worker`) and started from its text. Messages
// in: { id, task } or { spare } (a sent answer's buffer, transferred back); out: { id, bytes } (transferred) or
// { id, error }.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type Db } from '../db/open.ts';
import { openPostgres } from '../db/postgres.ts';
import { executeQuery, type QueryRequest } from '../influxql/execute.ts';
import type { Statement } from '../influxql/ast.ts';
import { runQueries } from '../telemetry/execute.ts';
import { resultsJson } from '../telemetry/query/result.ts';
import type { ReadTask, ReadWorkerData } from '../telemetry/read-workers.ts';
import type { QueryBody } from '../telemetry/telemetry.schemas.ts';
import { collectAfterWork } from '../lib/worker-heap.ts';

/** the worker connection's SQLite page cache (KiB) */
const PAGE_CACHE_KB = 8000;
/** sent answers' buffers kept for the next answers, at most this many bytes in all */
const SPARE_BYTES = 16 * 1024 * 1024;

const data = workerData as ReadWorkerData;
const db = 'databaseUrl' in data ? openPostgres({ url: data.databaseUrl, poolSize: data.poolSize }) : openSqlite(data);

function openSqlite(file: { file: string; addonFile: string }): Db {
  const addon = { exports: {} as object };
  process.dlopen(addon, file.addonFile);
  const db = openDatabase({ file: file.file, nativeBinding: addon.exports, readonly: true });
  // Blocks are read once and kept decoded (the catalogue's cache); the pages around them are the operating system's
  // to keep. A smaller page cache than the main connection's keeps the worker's share of the process small.
  db.sqlite.pragma(`cache_size = -${PAGE_CACHE_KB}`);
  return db;
}
const encoder = new TextEncoder();
const spares: ArrayBuffer[] = [];

/** The smallest spare buffer of at least `size` bytes, taken from the spares; undefined when none is large enough. */
function spareOf(size: number): ArrayBuffer | undefined {
  let best = -1;
  for (let i = 0; i < spares.length; i++) {
    if (spares[i].byteLength >= size && (best < 0 || spares[i].byteLength < spares[best].byteLength)) best = i;
  }
  return best < 0 ? undefined : spares.splice(best, 1)[0];
}

/** A buffer of at least `size` bytes for an answer: a spare one when one is large enough, else a new one. */
function bufferOf(size: number): Uint8Array<ArrayBuffer> {
  const spare = spareOf(size);
  return spare === undefined ? new Uint8Array(size) : new Uint8Array(spare);
}

/** The answer as UTF-8, in a spare buffer when one is large enough, else in a new one. */
function bytesOf(body: string | Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  if (typeof body !== 'string') return body;
  const spare = spareOf(body.length);
  if (spare !== undefined) {
    const { read, written } = encoder.encodeInto(body, new Uint8Array(spare));
    if (read === body.length) return new Uint8Array(spare, 0, written);
    keepSpare(spare);
  }
  return encoder.encode(body);
}

function keepSpare(spare: ArrayBuffer): void {
  let total = spare.byteLength;
  for (const s of spares) total += s.byteLength;
  if (total <= SPARE_BYTES) spares.push(spare);
}

async function answer(task: ReadTask): Promise<string | Uint8Array<ArrayBuffer>> {
  if (task.kind === 'influxql') {
    // charged on the main thread already; an answer written as bytes goes straight into a spare buffer
    return executeQuery(db, task.request as QueryRequest, task.statements as Statement[], { epoch: task.epoch, charge: async () => {}, buffer: bufferOf });
  }
  const body = task.body as QueryBody;
  return resultsJson(await runQueries(db, task.userId, body, task.nowMs), !Array.isArray(body));
}

parentPort!.on('message', (m: { id: number; task: ReadTask } | { spare: ArrayBuffer }) => {
  if ('spare' in m) {
    keepSpare(m.spare);
    return;
  }
  void answer(m.task).then((body) => {
    const bytes = bytesOf(body);
    parentPort!.postMessage({ id: m.id, bytes }, [bytes.buffer]);
  }, (err: unknown) => {
    parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }).finally(() => {
    // the answer is on its way: what it was made of is garbage now (a raw week's rows reach the old generation)
    collectAfterWork();
  });
});
