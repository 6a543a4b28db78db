// Several gridkeeper processes (the built executable) on one PostgreSQL database, and the faults an operator of such a
// cluster meets:
//   - three nodes started at the same moment on an empty database: migrations, keys, root role and admin once;
//   - kill -9 of one node under a mixed write load spread over three: the other two keep answering every request,
//     nothing acknowledged is lost (checked write by write after the killed node is started again);
//   - the PostgreSQL server stopped and restarted (`pg_ctlcluster`) under load: the nodes answer 503
//     DATABASE_UNAVAILABLE while it is down, never a 500, come back by themselves (no restart), and lose nothing
//     acknowledged. This one runs on a PostgreSQL cluster of its own (pg_createcluster on a free port), so the server
//     every other test file uses is never touched;
//   - docs/scale-out/cluster.sh, the example of docs/scale-out.md, starts PostgreSQL and three nodes, and stops them.
// PostgreSQL only. WORKERS (default 6).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { isolatedBinary, startBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, assertIntact, envInt, kill9, loginOver, postgresCheckDb, serverErrors, sleep,
} from '../support/harness.ts';
import { emptyPostgres, testBackend } from '../support/postgres.ts';
import { freePort } from '../support/ports.ts';
import { migrations } from '../../src/db/migrate.ts';
import { checkLedger, createFixture, newLoadState, observe, runWorker, type Fixture, type LoadState } from './write-load.ts';

const WORKERS = envInt('WORKERS', 6);
const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';

let dir: string;
let exe: string;
const running: RunningBinary[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

before(() => { if (!skip) ({ dir, exe } = isolatedBinary()); });
after(async () => {
  for (const r of running) await kill9(r);
  for (const c of cleanups.reverse()) await c();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Starts a node on `url`; every node of a cluster shares the sealing key. */
async function node(name: string, url: string, key: string): Promise<RunningBinary> {
  const r = await startBinary(exe, ['--data-dir', join(dir, name)], {
    GRIDKEEPER_DATABASE_URL: url, GRIDKEEPER_SECRET_KEY: key, GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'warn',
  });
  running.push(r);
  return r;
}

interface Load { state: LoadState; stop(): Promise<void> }

/** WORKERS workers, worker w sending to clients[w % clients.length]; a worker stops when its node stops answering. */
function startLoad(clients: HttpClient[], token: string, fixture: Fixture, seed: number, state = newLoadState(WORKERS)): Load {
  let stopped = false;
  const workers = Array.from({ length: WORKERS }, (_, w) => runWorker({
    client: clients[w % clients.length], token: () => token, fixture, state, worker: w, seed: seed + w, keepGoing: () => !stopped,
  }));
  return { state, async stop() { stopped = true; await Promise.all(workers); } };
}

describe('a cluster of nodes on one PostgreSQL database', { skip }, () => {
  it('three nodes started at once; kill -9 of one under load: the others answer everything, nothing acknowledged is lost', { timeout: 120_000 }, async () => {
    const database = await emptyPostgres();
    cleanups.push(() => database.drop());
    const key = randomBytes(32).toString('base64');
    const nodes = await Promise.all(['a', 'b', 'c'].map((n) => node(n, database.url, key)));
    const check = postgresCheckDb(database.url);
    cleanups.push(() => check.close());
    // first start, three times at once: everything once
    const counts = await check.get(sql<Record<string, number>>`SELECT
      (SELECT count(*) FROM schema_migrations) AS migrations, (SELECT count(*) FROM users) AS users,
      (SELECT count(*) FROM roles) AS roles, (SELECT count(*) FROM members) AS members,
      (SELECT count(*) FROM signing_keys) AS keys, (SELECT count(*) FROM settings WHERE key = 'sealing_check') AS sealing`);
    assert.deepEqual(Object.fromEntries(Object.entries(counts!).map(([k, v]) => [k, Number(v)])),
      { migrations: migrations.length, users: 1, roles: 1, members: 1, keys: 1, sealing: 1 });
    const clients = nodes.map((n) => httpClient(n.url, { maxSockets: WORKERS + 2 }));
    const session = await loginOver(clients[0], ADMIN_EMAIL, ADMIN_PASSWORD);
    for (const c of clients.slice(1)) assert.equal((await c.request('GET', '/auth/accesstoken/validate', { token: session.access })).status, 200);
    const fixture = await createFixture(clients[1], session.access, WORKERS, 'cluster');

    const load = startLoad(clients, session.access, fixture, 9100);
    // by counts of acknowledged writes to A and C, not by time alone: a slow machine loads as much as a fast one
    const ackedByOthers = () => load.state.writes.filter((w) => w.worker % 3 !== 1 && w.outcome === 'acked').length;
    await sleep(600);
    for (let i = 0; i < 400 && ackedByOthers() < 10; i++) await sleep(50);
    await kill9(nodes[1]);
    const atKill = ackedByOthers();
    await sleep(900);
    for (let i = 0; i < 400 && ackedByOthers() < atKill + 15; i++) await sleep(50);
    await load.stop();
    // the workers of A and C: every write answered 2xx, before and after B died
    const others = load.state.writes.filter((w) => w.worker % 3 !== 1);
    const failed = others.filter((w) => w.outcome !== 'acked');
    assert.deepEqual(failed.slice(0, 5).map((w) => `${w.kind} ${w.status} ${w.error ?? ''}`), [], `${failed.length} of ${others.length} writes to A and C were not acknowledged; ${serverErrors(nodes[0]).concat(serverErrors(nodes[2])).slice(0, 3).join(' | ')}`);
    assert.ok(others.length > 20, `the load ran (${others.length} writes to A and C)`);
    assert.ok(load.state.writes.some((w) => w.worker % 3 === 1 && w.outcome === 'unknown'), 'B died under load');

    // B again; every acknowledged write (on any node) is there, read through B
    const b = await node('b', database.url, key);
    const bClient = httpClient(b.url, { maxSockets: 4 });
    const observed = await observe(bClient, session.access, fixture, WORKERS, check).catch((e: unknown) => {
      throw new Error(`${String(e)}; B logged: ${serverErrors(b).slice(0, 3).join(' | ')}`);
    });
    const report = checkLedger(load.state.writes, observed, 'after kill -9 of B');
    await assertIntact(check, 'after kill -9 of B');
    console.log(`cluster: ${report.acked} writes acknowledged over 3 nodes, B killed mid-load: all present (${JSON.stringify(report.byKind)}); ${report.unknown} unanswered, all-or-nothing`);
    for (const c of [...clients, bClient]) c.close();
    for (const r of [nodes[0], nodes[2], b]) assert.equal(await r.stop(), 0);
  });

  it('the PostgreSQL server stopped and restarted under load: 503 DATABASE_UNAVAILABLE meanwhile, recovery without a restart, nothing acknowledged lost', { timeout: 120_000 }, async () => {
    const cluster = await privateCluster();
    cleanups.push(() => cluster.drop());
    const key = randomBytes(32).toString('base64');
    const nodes = [await node('r1', cluster.url, key), await node('r2', cluster.url, key)];
    const clients = nodes.map((n) => httpClient(n.url, { maxSockets: WORKERS + 2 }));
    const session = await loginOver(clients[0], ADMIN_EMAIL, ADMIN_PASSWORD);
    const fixture = await createFixture(clients[0], session.access, WORKERS, 'restart');
    const state = newLoadState(WORKERS);

    let load = startLoad(clients, session.access, fixture, 9300, state);
    await sleep(400);
    cluster.ctl('stop', '-m', 'fast');
    for (const [i, c] of clients.entries()) {
      const health = await c.request('GET', '/healthz');
      assert.equal(health.status, 503, `${health.text}${health.error ?? ''}; node exit code ${nodes[i].child.exitCode}: ${nodes[i].stderr.join('').slice(-400)}`);
      assert.deepEqual([health.body.code, health.body.database, health.headers['retry-after']], ['DATABASE_UNAVAILABLE', 'unreachable', '2']);
    }
    await sleep(700); // the load keeps sending while the server is down
    cluster.ctl('start');
    await untilHealthy(clients);
    await sleep(400);
    cluster.ctl('restart', '-m', 'fast'); // and a restart, while the load runs
    await untilHealthy(clients);
    await sleep(400);
    await load.stop();
    const by = (s: number) => state.writes.filter((w) => w.status === s).length;
    const bad = state.writes.filter((w) => w.status !== 503 && (w.status < 200 || w.status >= 300));
    assert.deepEqual(bad.slice(0, 5).map((w) => `${w.kind} ${w.status} ${w.error ?? ''}`), [], `${serverErrors(nodes[0]).concat(serverErrors(nodes[1])).slice(0, 3).join(' | ')}`);
    assert.ok(by(503) > 0, 'writes met the server down');
    // after it: every node serves again, without a restart
    load = startLoad(clients, session.access, fixture, 9400, state);
    await sleep(300);
    await load.stop();
    const afterwards = state.writes.slice(-20);
    assert.ok(afterwards.every((w) => w.outcome === 'acked'), JSON.stringify(afterwards.map((w) => w.status)));
    const check = postgresCheckDb(cluster.url);
    try {
      const report = checkLedger(state.writes, await observe(clients[1], session.access, fixture, WORKERS, check), 'after the server restarts');
      await assertIntact(check, 'after the server restarts');
      console.log(`server restart: ${report.acked} writes acknowledged, all present; ${by(503)} answered 503 while it was down (stored whole or not at all)`);
    } finally {
      await check.close();
    }
    for (const c of clients) c.close();
    for (const r of nodes) assert.equal(await r.stop(), 0);
  });
});

async function untilHealthy(clients: HttpClient[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (const c of clients) {
    for (;;) {
      const r = await c.request('GET', '/healthz');
      if (r.status === 200) break;
      assert.equal(r.status, 503, r.text);
      assert.ok(Date.now() < deadline, 'the node did not recover within 30 s of the server starting');
      await sleep(100);
    }
  }
}

/** A PostgreSQL 15 cluster of this test alone (Debian's pg_createcluster, trust auth on loopback, a free port). */
async function privateCluster(): Promise<{ url: string; ctl(...args: string[]): void; drop(): void }> {
  const port = await freePort();
  const name = `gktest${process.pid}`;
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  try {
    run('pg_createcluster', ['15', name, '-p', String(port), '--start', '--', '--auth=trust']);
  } catch (err) {
    throw new Error(`pg_createcluster (Debian's postgresql-common, run as root) is needed for the server-restart test: ${(err as Error).message}`);
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    ctl: (...args) => { run('pg_ctlcluster', ['15', name, ...args]); },
    drop: () => { run('pg_dropcluster', ['15', name, '--stop']); },
  };
}

describe('docs/scale-out/cluster.sh, the example of docs/scale-out.md', { skip }, () => {
  it('starts PostgreSQL and three nodes that serve one installation, and stops them', { timeout: 120_000 }, async () => {
    const script = fileURLToPath(new URL('../../docs/scale-out/cluster.sh', import.meta.url));
    // a directory PostgreSQL's user can reach (the script runs initdb as postgres when run as root)
    const home = join(mkdtempSync(join(tmpdir(), 'gk-cluster-')), 'example');
    chmodSync(dirname(home), 0o755);
    cleanups.push(() => rmSync(dirname(home), { recursive: true, force: true }));
    const ports = [await freePort(), await freePort(), await freePort()];
    const env = { ...process.env, GRIDKEEPER: exe, PG_PORT: String(await freePort()), PORTS: ports.join(' '), GRIDKEEPER_DATABASE_URL: '' };
    delete (env as Record<string, string | undefined>).GRIDKEEPER_DATABASE_URL;
    const run = (cmd: string) => execFileSync(script, [cmd, home], { env, encoding: 'utf8', timeout: 60_000 });
    cleanups.push(() => { try { run('stop'); } catch { /* stopped already */ } });
    const started = run('start');
    for (const port of ports) {
      assert.match(started, new RegExp(`node :${port} \\{"status":"ok","version":"[^"]+","backend":"postgres","database":"reachable"\\}`));
    }
    const password = readFileSync(join(home, 'admin-password'), 'utf8').trim();
    const [first, , last] = ports.map((p) => httpClient(`http://127.0.0.1:${p}`, { maxSockets: 2 }));
    const session = await loginOver(first, ADMIN_EMAIL, password);
    assert.equal((await last.request('GET', '/auth/accesstoken/validate', { token: session.access })).status, 200);
    first.close();
    last.close();
    run('stop');
    assert.throws(() => run('status'), 'no node answers after stop');
    assert.equal(existsSync(join(home, 'pg', 'postmaster.pid')), false, 'PostgreSQL stopped');
  });
});
