// The floor under issue 18's PATCH aim: the least a durable JSON PATCH over HTTP can cost with this stack, served by
// a bare @hono/node-server and one better-sqlite3 connection, with nothing of gridkeeper's (no authentication, rights,
// validation, audit entry, kysely, If-Unmodified-Since). bench/patch-floor.mjs loads it beside gridkeeper.
//   GET   /healthz     the same answer as bench/bare-hono.mjs
//   PATCH /echo/:id    reads the JSON body and answers JSON: the HTTP exchange of a PATCH without the database
//   PATCH /device/:id  reads the JSON Patch (replace ops), reads the row, writes it back; units of one event-loop turn
//                      share one transaction, committed under synchronous=NORMAL and then made durable by fdatasync of
//                      the WAL on the thread pool before anyone is answered (the same scheme as src/db/open.ts)
// Run by bench/patch-floor.mjs; argv[2] is a directory for the database file.
import { fdatasync, openSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import Database from 'better-sqlite3';

const file = join(process.argv[2], 'floor.db');
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS devices (id INTEGER PRIMARY KEY, properties TEXT NOT NULL, last_update INTEGER NOT NULL)');
const insert = db.prepare('INSERT OR REPLACE INTO devices (id, properties, last_update) VALUES (?, ?, ?)');
for (let id = 1; id <= 100; id++) {
  insert.run(id, JSON.stringify({ name: `device ${id}`, nodeId: `node-${id}`, nodeType: 'battery', isActive: true, capacityKwh: 13.5 }), Date.now());
}
const read = db.prepare('SELECT id, properties, last_update FROM devices WHERE id = ?');
const update = db.prepare('UPDATE devices SET properties = ?, last_update = ? WHERE id = ?');
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const wal = openSync(`${file}-wal`, 'r+');

/** Group commit: the units of one turn in one transaction, answered after the WAL is on disk. */
let queue = [];
function durably(unit) {
  return new Promise((resolve, reject) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push({ unit, resolve, reject });
  });
}
function flush() {
  const jobs = queue;
  queue = [];
  begin.run();
  const results = jobs.map((job) => {
    try {
      return { ok: true, value: job.unit() };
    } catch (error) {
      return { ok: false, error };
    }
  });
  commit.run();
  fdatasync(wal, (err) => jobs.forEach((job, i) => {
    if (err) job.reject(err);
    else if (results[i].ok) job.resolve(results[i].value);
    else job.reject(results[i].error);
  }));
}

const app = new Hono();
app.get('/healthz', (c) => c.json({ status: 'ok' }));
app.patch('/echo/:id', async (c) => {
  const ops = await c.req.json();
  return c.json({ id: Number(c.req.param('id')), ops: ops.length });
});
app.patch('/device/:id', async (c) => {
  const id = Number(c.req.param('id'));
  const ops = await c.req.json();
  const device = await durably(() => {
    const row = read.get(id);
    const properties = JSON.parse(row.properties);
    for (const op of ops) if (op.op === 'replace') properties[op.path.slice(1)] = op.value;
    const text = JSON.stringify(properties);
    const now = Math.max(Date.now(), row.last_update + 1);
    update.run(text, now, id);
    return { id, lastUpdate: new Date(now).toISOString(), properties };
  });
  return c.json(device);
});
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${info.port}` }));
});
process.on('SIGTERM', () => process.exit(0));
