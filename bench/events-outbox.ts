// The outbox after 1M events (issue 40): how much room 1M device.updated events take with one subscription — pending,
// then delivered with one attempt each —, and how long retention takes to delete them once delivered.
// SQLite: the events go through the outbox's own write path (writeEvents, 5,000 per transaction, each fanned out to
// the subscription); PostgreSQL (BACKEND=postgres): the same rows made by INSERT ... SELECT generate_series (the
// sizes are the point; writing 1M events a round trip at a time measures the network instead).
// Each phase prints its time on stderr as it ends. EVENTS (default 1,000,000).
// Run: node --import ./test/support/register.mjs bench/events-outbox.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../src/db/open.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { bootstrap } from '../src/boot/bootstrap.ts';
import { writeEvents, type EventDraft } from '../src/events/outbox.ts';
import { pruneEvents } from '../src/events/events.store.ts';
// @ts-expect-error a plain .mjs helper without types
import { benchDatabase } from './lib/postgres.mjs';

const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const BACKEND = process.env.BACKEND ?? 'sqlite';
const BATCH = 5_000;
const fmt = (n: number, d = 1) => n.toFixed(d);
const phase = (what: string) => console.error(`[${BACKEND}] ${new Date().toISOString().slice(11, 19)} ${what}`);
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;

const dir = mkdtempSync(join(tmpdir(), 'gk-bench-outbox-'));
const pgDb = BACKEND === 'postgres' ? await benchDatabase(`gk_bench_outbox_${process.pid}`) : undefined;
const db: Db = pgDb ? openPostgres({ url: pgDb.url }) : openDatabase({ file: join(dir, 'gridkeeper.db') });
const TABLES = ['events', 'event_deliveries', 'event_attempts', 'event_subscriptions', 'event_subscription_types'];

async function size(): Promise<number> {
  if (db.backend === 'postgres') {
    return (await db.get(sql<{ n: number }>`SELECT sum(pg_total_relation_size(c.oid)) AS n FROM pg_class c WHERE c.relname IN (${sql.join(TABLES)}) AND c.relkind = 'r'`))!.n;
  }
  // every page of the event tables and their indexes (dbstat), not the file: the rest of the schema is not the outbox's
  return (await db.get(sql<{ n: number }>`SELECT sum(pgsize) AS n FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name IN (${sql.join(TABLES)}))`))!.n;
}

try {
  await migrate(db, Date.now());
  await bootstrap(db, { adminEmail: 'admin@localhost', adminPassword: 'bench-password-1', now: Date.now() });
  const t0 = Date.now() - 10 * 24 * 3600_000; // the events happened ten days ago: past a 7-day retention
  await db.tx(async (tx) => {
    const row = await tx.get(sql<{ id: number }>`INSERT INTO event_subscriptions (role_id, kind, name, url, types, secret, enabled, created_at, updated_at)
      VALUES (1, 'webhook', 'bench', 'http://127.0.0.1:9/', '["*"]', 'x', 1, ${t0}, ${t0}) RETURNING id`);
    await tx.run(sql`INSERT INTO event_subscription_types (type, subscription_id) VALUES ('*', ${row!.id})`);
  });
  const started = performance.now();
  if (db.backend === 'sqlite') {
    for (let done = 0; done < EVENTS; done += BATCH) {
      const drafts: EventDraft[] = [];
      for (let i = done; i < Math.min(done + BATCH, EVENTS); i++) {
        drafts.push({ type: 'device.updated', at: t0 + i, subject: 'device', subjectId: String(1 + (i % 1000)), audience: 'device', roleId: null,
          deviceId: 1 + (i % 1000), data: { changes: { power: { before: i - 1, after: i } } } });
      }
      await db.tx((tx) => writeEvents(tx, drafts));
    }
  } else {
    await db.tx(async (tx) => {
      await tx.run(sql`INSERT INTO events (uid, type, at, subject_kind, subject_id, audience, device_id, data)
        SELECT 'evt_' || substr(md5(i::text), 1, 22), 'device.updated', CAST(${t0} AS BIGINT) + i, 'device', (1 + i % 1000)::text, 'device', 1 + i % 1000,
          '{"changes":{"power":{"before":' || (i - 1) || ',"after":' || i || '}}}'
        FROM generate_series(1, ${EVENTS}) AS i`);
      await tx.run(sql`INSERT INTO event_deliveries (subscription_id, event_id, state, next_at, created_at)
        SELECT (SELECT min(id) FROM event_subscriptions), id, 'pending', at, at FROM events`);
    });
    await db.run(sql`ANALYZE`);
  }
  const wrote = (performance.now() - started) / 1000;
  phase(`written in ${fmt(wrote)} s`);
  const pending = await size();
  const deliverStart = performance.now();
  await db.tx(async (tx) => {
    await tx.run(sql`UPDATE event_deliveries SET state = 'delivered', attempts = 1, done_at = next_at, last_status = 204`);
    await tx.run(sql`INSERT INTO event_attempts (delivery_id, at, duration_ms, status, error, response) SELECT id, next_at, 2, 204, NULL, '' FROM event_deliveries`);
  });
  phase(`marked delivered with one attempt each in ${fmt((performance.now() - deliverStart) / 1000)} s`);
  if (db.backend === 'postgres') await db.run(sql`ANALYZE`);
  const delivered = await size();
  const pruneStart = performance.now();
  let pruned = 0;
  for (;;) {
    const n = await db.tx((tx) => pruneEvents(tx, Date.now() - 7 * 24 * 3600_000, 1_000));
    pruned += n;
    if (n > 0 && pruned % 100_000 === 0) phase(`retention: ${pruned.toLocaleString('en')} deleted in ${fmt((performance.now() - pruneStart) / 1000)} s`);
    if (n < 1_000) break;
  }
  const pruneSeconds = (performance.now() - pruneStart) / 1000;
  console.log(`[${BACKEND}] ${EVENTS.toLocaleString('en')} device.updated events, one subscription: `
    + (db.backend === 'sqlite' ? `written through the outbox in ${fmt(wrote)} s (${fmt(EVENTS / wrote, 0)} events/s, ${BATCH} per transaction); ` : `made in ${fmt(wrote)} s (one INSERT ... SELECT); `)
    + `outbox ${mb(pending)} pending (${fmt(pending / EVENTS, 0)} B/event), ${mb(delivered)} delivered with one attempt each (${fmt(delivered / EVENTS, 0)} B/event); `
    + `retention deleted ${pruned.toLocaleString('en')} delivered events in ${fmt(pruneSeconds)} s (${fmt(pruned / pruneSeconds, 0)} events/s, 1,000 per transaction)`);
} finally {
  await db.close();
  await pgDb?.drop();
  rmSync(dir, { recursive: true, force: true });
}
