// Nodes behind PgBouncer in transaction mode (docs/scale-out.md): every transaction of a node may run on another server
// connection, so nothing may rely on a session — no session-level lock, no LISTEN, and named prepared statements only
// until the server shows they were lost (db/prepared.ts). Two nodes start through the pooler (migrations, bootstrap),
// race, write and read telemetry; a write unit that keeps failing runs alone (the exclusive write gate) without
// leaving anything behind for the next transaction; a prepared statement the pooler lost is run again unnamed.
// PostgreSQL only; PgBouncer comes from Debian's pgbouncer package (test/support/system-packages.mjs).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, ROOT_ROLE_ID, T0, type TestApp } from '../support/app.ts';
import { databaseUrl, freshPostgres, TEST_SERVER_URL, testBackend } from '../support/postgres.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { addDevice, addMonitors } from '../devices/fixtures.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { Db } from '../../src/db/open.ts';

const skip = testBackend() !== 'postgres' && 'a pooler in front of PostgreSQL';
const iso = (ms: number) => new Date(ms).toISOString();

async function pooled(t: { after(fn: () => Promise<void>): void }): Promise<{ direct: TestApp; nodes: TestApp[]; pooler: PgBouncer; name: string }> {
  const server = new URL(TEST_SERVER_URL);
  const pooler = await startPgBouncer({ host: server.hostname, port: Number(server.port || 5432) });
  const direct = await makeTestApp();
  const nodes = [await direct.anotherNode({ via: pooler.via }), await direct.anotherNode({ via: pooler.via })];
  t.after(async () => {
    for (const n of nodes) await n.close();
    await direct.close();
    await pooler.stop();
  });
  const name = (await direct.deps.db.get(sql<{ name: string }>`SELECT current_database() AS name`))!.name;
  return { direct, nodes, pooler, name };
}

describe('nodes behind PgBouncer in transaction mode', { skip }, () => {
  it('start, race and serve telemetry through the pooler exactly as directly', async (t) => {
    const { direct, nodes } = await pooled(t);
    const device = await addDevice(direct, { nodeId: 'm1', owner: 'nobody' });
    await addMonitors(direct, ROOT_ROLE_ID, device, { mm: true });
    direct.clock.advance(60_000);
    const all = [...nodes, direct];
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => all[i % 3].request('PATCH', `/v1/device/${device}`, {
      token: all[i % 3].adminToken, body: [{ op: 'replace', path: '/owner', value: `c${i}` }], headers: { 'if-unmodified-since': iso(T0) },
    })));
    const statuses = results.map((r) => r.status);
    assert.deepEqual([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 412).length], [1, 23], JSON.stringify(statuses));
    // telemetry: a new namespace, series and shard through one pooled node (advisory transaction locks), read through the other
    const written = await nodes[0].request('POST', '/v1/telemetry?db=site&rp=autogen&precision=ms', {
      token: nodes[0].adminToken, raw: `power,nodeId=m1 v=1.5 ${T0}\npower,nodeId=m1 v=2.5 ${T0 + 1000}`, headers: { 'content-type': 'text/plain' },
    });
    assert.equal(written.status, 204, written.text);
    const read = await nodes[1].request('POST', '/v1/telemetry/query', { token: nodes[1].adminToken, body: {
      select: ['v'], from: { measurement: 'power', database: 'site', retentionPolicy: 'autogen' },
      where: { tags: { nodeId: 'm1' }, time: [{ operator: '>=', value: T0 }, { operator: '<', value: T0 + 2000 }] },
    } });
    assert.deepEqual(read.body.series?.[0].values, [[iso(T0), 1.5], [iso(T0 + 1000), 2.5]]);
    const influx = await nodes[1].request('GET', `/query?db=site&q=${encodeURIComponent('SELECT count(v) FROM power')}`, { token: nodes[1].adminToken });
    assert.equal(influx.body.results[0].series[0].values[0][1], 2, influx.text);
  });

  it('a prepared statement the pooler lost (PgBouncer before 1.21) runs again unnamed, and the node stops naming statements', async (t) => {
    // A pooler of its own, with few server connections: a text one node prepared is found on a server connection by
    // another node's Parse ("already exists") once every server connection holds it — within a few nodes, on the
    // pool and inside a transaction. Every answer stays right meanwhile.
    const server = new URL(TEST_SERVER_URL);
    const pooler = await startPgBouncer({ host: server.hostname, port: Number(server.port || 5432) }, 1);
    const fresh = await freshPostgres();
    const opened: Array<ReturnType<typeof openPostgres>> = [];
    t.after(async () => {
      for (const db of opened) await db.close();
      await pooler.stop();
      await fresh.drop();
    });
    const node = () => { const db = openPostgres({ url: pooler.via(databaseUrl(fresh.name)), poolSize: 1 }); opened.push(db); return db; };
    await fresh.db.run(sql`INSERT INTO settings (key, value) VALUES ('p1', 'one'), ('p2', 'two')`);
    const value = (on: Db, k: string) => on.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = ${k}`);
    const expected = (k: string) => ({ value: k === 'p1' ? 'one' : 'two' });
    const keys = ['p1', 'p2', 'p1', 'p2'];
    // on the pool: the statement that met the lost name runs again unnamed at once
    let lostOnPool: Db | undefined;
    for (let i = 0; i < 6 && lostOnPool === undefined; i++) {
      const db = node();
      for (const k of keys) assert.deepEqual(await value(db, k), expected(k));
      if (db.poolStats!().prepared === 0) lostOnPool = db;
      else assert.equal(db.poolStats!().prepared, 1, 'the text is named from its second sighting');
    }
    assert.ok(lostOnPool, 'a node met a name the pooler had on another server connection');
    for (const k of keys) assert.deepEqual(await value(lostOnPool, k), expected(k));
    // inside a transaction: the transaction runs once more
    let rerun = false;
    for (let i = 0; i < 6 && !rerun; i++) {
      const db = node();
      let runs = 0;
      for (const k of keys) assert.deepEqual(await db.tx(async (tx) => { runs++; return value(tx, k); }), expected(k));
      rerun = runs === keys.length + 1;
      if (rerun) assert.equal(db.poolStats!().prepared, 0, 'naming stopped after the server refused one');
      else assert.equal(runs, keys.length);
    }
    assert.ok(rerun, 'a transaction met a name the pooler had on another server connection, and ran again');
  });

  it('a write unit that keeps conflicting runs alone, and the gate is free for the next transaction on any connection', async (t) => {
    const { name, pooler } = await pooled(t);
    const url = pooler.via(databaseUrl(name));
    const a = openPostgres({ url, poolSize: 2 });
    const b = openPostgres({ url, poolSize: 2 });
    t.after(async () => { await a.close(); await b.close(); });
    await a.run(sql`INSERT INTO settings (key, value) VALUES ('counter', '0')`);
    // a unit that fails like a serialization failure three times: the fourth attempt runs alone
    let attempts = 0;
    const stubborn = a.write(async (tx) => {
      attempts++;
      await tx.run(sql`UPDATE settings SET value = (value::int + 1)::text WHERE key = 'counter'`);
      if (attempts < 4) throw Object.assign(new Error('conflict'), { code: '40001' });
      return 'done';
    });
    assert.equal(await stubborn, 'done');
    assert.equal(attempts, 4);
    assert.deepEqual([a.poolStats!().retries, a.poolStats!().alone], [3, 1]);
    // 40 units of two nodes at once on the same row (real conflicts): all complete, none lost, nothing left locked
    const bump = (db: typeof a) => db.write(async (tx) => {
      const row = await tx.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'counter'`);
      await tx.run(sql`UPDATE settings SET value = ${String(Number(row!.value) + 1)} WHERE key = 'counter'`);
    });
    await Promise.all(Array.from({ length: 40 }, (_, i) => bump(i % 2 ? a : b)));
    assert.equal((await b.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'counter'`))!.value, '41');
  });
});
