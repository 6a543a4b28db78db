// The telemetry read worker (src/telemetry/read-workers.ts): a thread with its own connection (the SQLite file
// read-only, or a small PostgreSQL pool) that answers heavy query requests whole — InfluxQL (this door's) and JSON
// telemetry queries — as the main thread would, rights included, and hands back the answer's bytes. It lives beside
// the InfluxDB door because it runs both query languages.
//
// Bundled on its own (src/build/esbuild-plugins.mjs, `gridkeeper:read-worker`) and started from its text. Messages
// in: { id, task }; out: { id, bytes } (transferred) or { id, error }.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type Db } from '../db/open.ts';
import { openPostgres } from '../db/postgres.ts';
import { executeQuery, type QueryRequest } from '../influxql/execute.ts';
import type { Statement } from '../influxql/ast.ts';
import { runQueries } from '../telemetry/execute.ts';
import { resultsJson } from '../telemetry/query/result.ts';
import type { ReadTask, ReadWorkerData } from '../telemetry/read-workers.ts';
import type { QueryBody } from '../telemetry/telemetry.schemas.ts';

const data = workerData as ReadWorkerData;
const db = 'databaseUrl' in data ? openPostgres({ url: data.databaseUrl, poolSize: data.poolSize }) : openSqlite(data);

function openSqlite(file: { file: string; addonFile: string }): Db {
  const addon = { exports: {} as object };
  process.dlopen(addon, file.addonFile);
  return openDatabase({ file: file.file, nativeBinding: addon.exports, readonly: true });
}
const encoder = new TextEncoder();

async function answer(task: ReadTask): Promise<string> {
  if (task.kind === 'influxql') {
    // charged on the main thread already
    const body = await executeQuery(db, task.request as QueryRequest, task.statements as Statement[], { epoch: task.epoch, charge: async () => {} });
    return typeof body === 'string' ? body : new TextDecoder().decode(body);
  }
  const body = task.body as QueryBody;
  return resultsJson(await runQueries(db, task.userId, body, task.nowMs), !Array.isArray(body));
}

parentPort!.on('message', (m: { id: number; task: ReadTask }) => {
  void answer(m.task).then((text) => {
    const bytes = encoder.encode(text);
    parentPort!.postMessage({ id: m.id, bytes }, [bytes.buffer]);
  }, (err: unknown) => {
    parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  });
});
