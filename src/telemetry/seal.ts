// Sealing closed shard windows into compressed blocks (docs/api.md#telemetry-blocks), on whichever backend: on SQLite
// in the fold worker when the database is a file, else on the main thread a transaction at a time, yielding to requests
// between them. A service seals on a timer (startSealing); `gridkeeper telemetry seal` and the tests call sealDue.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/open.ts';
import type { Logger } from '../lib/logger.ts';
import { catalogueOf } from './sqlite/catalogue.ts';
import { sealStep } from './sqlite/seal.ts';
import { logSealingTo, noteSealed, sealProgress, type SealProgress } from './sqlite/seal-progress.ts';
import { sealStagedWhenDue, settleStaged, stagingOf } from './sqlite/staging.ts';
import { sealStepPg } from './pg/pg-seal.ts';
import { folding, sealStagedWhenDuePg, settleStaged as settleStagedPg } from './pg/pg-staging.ts';
import { unsealedWindows } from './telemetry.store.ts';

/** Points per sealing transaction on the main thread: each holds the event loop for ~10 ms at most. */
const SEAL_POINTS = 10_000;

/**
 * Seals every window due at `nowMs` (on the main thread: until `stopping()`); resolves once they are sealed. A pass on
 * the timer (`timed`) on PostgreSQL leaves what is staged to the node's folder while that is at work: it takes the
 * points of due windows straight into blocks, in larger pieces than a pass would fold.
 */
export async function sealDue(db: Db, nowMs: number, stopping: () => boolean = () => false, timed = false): Promise<void> {
  if (db.backend === 'postgres') {
    // the staged points of a window are folded before it is sealed
    if (!(timed && folding(db))) await settleStagedPg(db);
    // windows whose emptied table stays for a read under way (pg/pg-seal.ts): dropped by a later pass
    const left: string[] = [];
    while (!stopping()) {
      const step = await sealStepPg(db, nowMs, (points) => points >= SEAL_POINTS, left);
      if (step === undefined) return;
      noteSealed(step);
      if (step.series === 0 && !step.done) left.push(step.table);
    }
    return;
  }
  const staging = await db.exclusive((conn) => (conn.sqlite.readonly ? null : stagingOf(conn)));
  if (staging === null) return;
  if (staging?.active === true) {
    // a worker stopped while idle (or stopping: waited for) is started again only when a window is due
    await staging.idleStopped();
    if (staging.asleep && (await unsealedWindows(db, nowMs)).due === 0) return;
    await staging.seal(nowMs);
    return;
  }
  // the staged points of a window are folded before it is sealed
  await db.exclusive((conn) => settleStaged(conn));
  while (!stopping()) {
    const step = await db.exclusive((conn) => {
      try {
        return conn.transaction(() => sealStep(conn.sqlite, nowMs, (points) => points >= SEAL_POINTS));
      } finally {
        // the mirror lists which windows are sealed and names their tables: it is read again after every seal
        catalogueOf(conn).reset();
      }
    });
    if (step === undefined) return;
    noteSealed(step);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Seals what is due now and then every `everyMs` until the database closes (a pass never overlaps the one before). At
 * start this seals what an earlier version left in shard tables: an upgrade needs nothing else.
 */
export function startSealing(db: Db, now: () => number, log: Logger, everyMs: number): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = () => {
    if (running !== undefined || stopped) return;
    running = sealDue(db, now(), () => stopped, true)
      .catch((err: unknown) => { if (!stopped) log.error('telemetry sealing failed; it is tried again', { error: String(err) }); })
      .finally(() => { running = undefined; });
  };
  logSealingTo(log);
  if (db.backend === 'sqlite') {
    void db.exclusive((conn) => sealStagedWhenDue(conn, now))
      .catch((err: unknown) => log.warn('telemetry: staged points are folded before they are sealed', { error: String(err) }));
  } else sealStagedWhenDuePg(db, now, pass);
  const timer = setInterval(pass, everyMs);
  timer.unref();
  pass();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/**
 * /metrics (docs/api.md#telemetry-blocks): what this process sealed since it started, and the windows still waiting:
 * those whose shard table holds points, and among them those closed for the grace period (due now).
 */
export function registerSealingMetrics(registry: Registry, db: Db, now: () => number): void {
  const total = (name: string, help: string, read: (p: SealProgress) => number) => new Counter({
    name, help, registers: [registry], collect() { this.reset(); this.inc(read(sealProgress())); },
  });
  total('gridkeeper_telemetry_sealed_windows_total', 'Telemetry windows this process sealed whole into blocks', (p) => p.windows);
  total('gridkeeper_telemetry_sealed_points_total', 'Telemetry points this process sealed into blocks', (p) => p.points);
  total('gridkeeper_telemetry_sealed_bytes_total', 'Bytes of the blocks this process wrote while sealing', (p) => p.bytes);
  new Gauge({
    name: 'gridkeeper_telemetry_windows_unsealed', help: 'Telemetry windows whose shard table holds points, by whether they are due for sealing',
    labelNames: ['due'], registers: [registry],
    async collect() {
      // a database that cannot be reached leaves the gauge out of the scrape: /metrics itself still answers
      const figures = await unsealedWindows(db, now()).catch(() => undefined);
      this.reset();
      if (figures === undefined) return;
      this.set({ due: 'false' }, figures.open - figures.due);
      this.set({ due: 'true' }, figures.due);
    },
  });
}
