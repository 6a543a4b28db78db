// Operations on the running executable under write load:
//   - `gridkeeper backup` (another process) while writers keep writing: each copy passes integrity_check, holds every
//     write acknowledged before the backup started, is one consistent snapshot (per writer, what it holds is a prefix of
//     that writer's writes; nothing torn), and restores: the executable started on a data dir holding only the copy
//     serves it.
//   - graceful SIGTERM in the middle of a burst: requests the server was already reading finish with their 2xx, the
//     process exits 0, and after a restart every acknowledged write is there.
// On PostgreSQL `gridkeeper backup` is pg_dump: a copy is restored with pg_restore into a fresh database and served from
// there.
// BACKUPS (default 3), WORKERS (default 8).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { KEY_FILE } from '../../src/lib/secret-box.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, assertIntact, serverErrors, attachDatabase, dataDbFile, databaseEnv, dropDatabases, envInt, kill9, loginOver,
  openBackup, openCheckDb, sleep, startGridkeeper, type Session,
} from '../support/harness.ts';
import { checkLedger, createFixture, newLoadState, observe, presence, runWorker, type Fixture, type LoadState, type Write } from './write-load.ts';

const BACKUPS = envInt('BACKUPS', 3);
const WORKERS = envInt('WORKERS', 8);

let dir: string;
let exe: string;
const running: RunningBinary[] = [];

before(() => { ({ dir, exe } = isolatedBinary()); });
after(async () => {
  for (const r of running) await kill9(r);
  await dropDatabases();
  rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<RunningBinary> {
  const r = await startGridkeeper(exe, dataDir);
  running.push(r);
  return r;
}

function backup(dataDir: string, file: string): Promise<void> {
  return cli(['backup', file, '--data-dir', dataDir]).then(() => undefined);
}

/** Runs a gridkeeper command in another process; resolves with its stdout, rejects on a non-zero exit. */
async function cli(args: string[]): Promise<string> {
  // the data dir's database (PostgreSQL: its URL; nothing on SQLite)
  const dataDir = args[args.indexOf('--data-dir') + 1];
  const dbEnv = await databaseEnv(dataDir);
  return new Promise((resolve, reject) => {
    execFile(exe, args, { timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GRIDKEEPER_LOG: 'warn', ...dbEnv } },
      (err, out, stderr) => (err ? reject(new Error(`gridkeeper ${args.join(' ')}: ${err.message} ${stderr}`)) : resolve(out)));
  });
}

/** ~100,000 telemetry points, so a backup takes long enough for writes to land while it copies. */
async function bulk(client: HttpClient, token: string, fixture: Fixture): Promise<void> {
  const t0 = fixture.telemetryBase - 86_400_000;
  for (let b = 0; b < 5; b++) {
    const lines = Array.from({ length: 20_000 }, (_, i) => `bulk,nodeId=${fixture.controllers[1].nodeId},k=${i % 7} a=${i}.25,b=${b}i,c="x${i}" ${t0 + b * 20_000 + i}`).join('\n');
    const r = await client.request('POST', `/v1/telemetry?db=${fixture.db}bulk&rp=autogen&precision=ms`, { token, raw: lines, headers: { 'content-type': 'text/plain' } });
    assert.equal(r.status, 204, r.text);
  }
}

/**
 * The load's answers that are not 2xx (a 5xx among them shown with what the server logged).
 */
async function failedWrites(server: RunningBinary, statuses: Map<number, number>): Promise<[number, number][]> {
  const bad = [...statuses].filter(([s]) => s < 200 || s >= 300);
  if ((statuses.get(500) ?? 0) > 0) console.log(`server errors: ${serverErrors(server).slice(0, 3).join(' | ')}`);
  return bad;
}

const MONOTONE = new Set<Write['kind']>(['patch', 'create', 'licenses', 'activate', 'claim', 'telemetry']);

/** A consistent snapshot holds, per writer, a prefix of its (monotone) writes: nothing after a write it lacks. */
function assertPrefixes(writes: readonly Write[], observed: Parameters<typeof presence>[1], where: string): void {
  const problems: string[] = [];
  const lacking = new Map<number, Write>();
  for (const w of writes) {
    if (!MONOTONE.has(w.kind) || w.outcome === 'refused') continue;
    const seen = presence(w, observed);
    if (seen === 'partial') problems.push(`torn ${w.kind} w${w.worker}s${w.seq}`);
    const gap = lacking.get(w.worker);
    if (seen === 'all' && gap) problems.push(`w${w.worker}: has s${w.seq} (${w.kind}) but not the earlier acknowledged s${gap.seq} (${gap.kind})`);
    if (seen === 'none' && w.outcome === 'acked' && !gap) lacking.set(w.worker, w);
  }
  assert.deepEqual(problems.slice(0, 10), [], `${where}: not one snapshot`);
}

describe('operations under write load', () => {
  it(`${BACKUPS} online backups while ${WORKERS} writers write: consistent, complete up to their start, restorable`, { timeout: 180_000 }, async (t) => {
    const dataDir = join(dir, 'backup-live');
    const live = await start(dataDir);
    const client = httpClient(live.url, { maxSockets: WORKERS + 2 });
    const session = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
    const fixture = await createFixture(client, session.access, WORKERS, 'ops');
    await bulk(client, session.access, fixture);
    const state = newLoadState(WORKERS);
    let stop = false;
    const workers = Array.from({ length: WORKERS }, (_, w) => runWorker({
      client, token: () => session.access, fixture, state, worker: w, seed: 7000 + w, keepGoing: () => !stop,
    }));
    const copies: { file: string; ackedBefore: Write[] }[] = [];
    try {
      for (let i = 0; i < BACKUPS; i++) {
        await sleep(400);
        const ackedBefore = state.writes.filter((w) => w.outcome === 'acked');
        const file = join(dir, `copy-${i}.db`);
        await backup(dataDir, file);
        copies.push({ file, ackedBefore });
      }
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    assert.equal((await failedWrites(live, state.statuses)).length, 0, JSON.stringify(Object.fromEntries(state.statuses)));
    // the live database holds everything acknowledged
    const liveDb = await openCheckDb(dataDir);
    t.after(() => liveDb.close()); // closing twice is harmless
    let liveObserved;
    try { liveObserved = await observe(client, session.access, fixture, WORKERS, liveDb); } catch (e) { console.log('LIVE ERRORS', serverErrors(live)); throw e; }
    const report = checkLedger(state.writes, liveObserved, 'live');
    await liveDb.close();

    for (const [i, copy] of copies.entries()) {
      const opened = await openBackup(copy.file);
      t.after(() => opened.drop()); // dropping twice is harmless
      try { await assertIntact(opened.db, `backup ${i}`); } finally { await opened.db.close(); }
      // restore: a data dir holding nothing but the copy (PostgreSQL: the restored database, and the installation's
      // sealing key — backed up apart from the database, as docs/api.md says; a node with another key refuses to start)
      const restoredDir = join(dir, `restored-${i}`);
      mkdirSync(restoredDir);
      if (opened.database) {
        attachDatabase(restoredDir, opened.database);
        copyFileSync(join(dataDir, KEY_FILE), join(restoredDir, KEY_FILE));
      } else copyFileSync(copy.file, dataDbFile(restoredDir));
      const restored = await start(restoredDir);
      const rc = httpClient(restored.url);
      try {
        // the admin's session was in the database before the copy: its refresh token works on the restored one
        const access = await rc.request('GET', '/auth/accesstoken', { token: session.refresh });
        assert.equal(access.status, 200, access.text);
        const rdb = await openCheckDb(restoredDir);
        t.after(() => rdb.close()); // closing twice is harmless
        let observed;
        try { observed = await observe(rc, access.text, fixture, WORKERS, rdb); } catch (e) { console.log('RESTORED ERRORS', serverErrors(restored)); throw e; }
        await rdb.close();
        const missing = copy.ackedBefore.filter((w) => MONOTONE.has(w.kind) && presence(w, observed) !== 'all');
        assert.deepEqual(missing.slice(0, 5), [], `backup ${i}: ${missing.length} of ${copy.ackedBefore.length} writes acknowledged before it started are missing`);
        assertPrefixes(state.writes, observed, `backup ${i}`);
        const before = copy.ackedBefore.filter((w) => MONOTONE.has(w.kind)).length;
        const held = state.writes.filter((w) => MONOTONE.has(w.kind) && presence(w, observed) === 'all').length;
        console.log(`backup ${i}: all ${before} writes acknowledged before it started are in it; it holds ${held} (writes kept landing while it copied)`);
      } finally {
        rc.close();
        assert.equal(await restored.stop(), 0);
      }
    }
    console.log(`backups: ${copies.length} copies under load, ${report.acked} writes acknowledged and verified on the live database`);
    client.close();
    assert.equal(await live.stop(), 0);
  });

  it('the other commands (user add, license create, telemetry prune, migrate, backup) while writers write: no 5xx, their effects visible', { timeout: 120_000 }, async (t) => {
    const dataDir = join(dir, 'commands');
    const live = await start(dataDir);
    const client = httpClient(live.url, { maxSockets: WORKERS + 2 });
    const session = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
    const fixture = await createFixture(client, session.access, WORKERS, 'cmd');
    // old telemetry in its own namespace (100 days ago), for prune to drop while the load writes recent points
    const old = Date.now() - 100 * 86_400_000;
    const oldQuery = { select: ['v'], from: { measurement: 'old', database: 'cmdold', retentionPolicy: 'autogen' },
      where: { tags: { nodeId: fixture.controllers[1].nodeId }, time: [{ operator: '>=', value: old - 10_000 }, { operator: '<', value: old + 10_000 }] } };
    const writeOld = () => client.request('POST', '/v1/telemetry?db=cmdold&rp=autogen&precision=ms', {
      token: session.access, raw: `old,nodeId=${fixture.controllers[1].nodeId} v=1i ${old}`, headers: { 'content-type': 'text/plain' },
    });
    assert.equal((await writeOld()).status, 204);
    assert.equal((await client.request('POST', '/v1/telemetry/query', { token: session.access, body: oldQuery })).body.series?.length, 1);
    const state = newLoadState(WORKERS);
    let stop = false;
    const workers = Array.from({ length: WORKERS }, (_, w) => runWorker({
      client, token: () => session.access, fixture, state, worker: w, seed: 8200 + w, keepGoing: () => !stop,
    }));
    let keys: string[] = [];
    try {
      await sleep(300);
      const dd = ['--data-dir', dataDir];
      const [, created] = await Promise.all([
        cli(['user', 'add', 'operator@commands.test', '--password', 'operator-password-1', '--role', '1', ...dd]),
        cli(['license', 'create', '--type', 'commercial', '--duration', '30', '--count', '25', ...dd]),
        cli(['telemetry', 'prune', '--older-than', '60d', ...dd]),
        cli(['migrate', ...dd]),
        backup(dataDir, join(dir, 'commands-copy.db')),
      ]);
      keys = created.trim().split('\n');
      await sleep(300);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    assert.deepEqual(await failedWrites(live, state.statuses), [], 'every write of the load succeeded');
    // effects, seen by the running service
    const operator = await loginOver(client, 'operator@commands.test', 'operator-password-1');
    assert.equal((await client.request('POST', '/v1/role/query', { token: operator.access, body: { filter: { id: [1] } } })).body.role.length, 1);
    assert.equal(keys.length, 25);
    const activated = await client.request('POST', '/v1/license/activate', { token: session.access, body: { key: keys[0] } });
    assert.equal(activated.status, 200, activated.text);
    const pruned = await client.request('POST', '/v1/telemetry/query', { token: session.access, body: oldQuery });
    assert.equal(pruned.status, 200, pruned.text);
    assert.equal(pruned.body.series, undefined, 'the pruned points are gone');
    // ... and the dropped shard comes back on the next write into its window
    assert.equal((await writeOld()).status, 204);
    assert.equal((await client.request('POST', '/v1/telemetry/query', { token: session.access, body: oldQuery })).body.series?.length, 1);
    const db = await openCheckDb(dataDir);
    try {
      await assertIntact(db, 'after the commands');
      checkLedger(state.writes, await observe(client, session.access, fixture, WORKERS, db), 'after the commands');
    } finally {
      await db.close();
    }
    client.close();
    assert.equal(await live.stop(), 0);
  });

  it('SIGTERM during a burst: in-flight requests finish, exit 0, every acknowledged write persisted', { timeout: 120_000 }, async () => {
    const dataDir = join(dir, 'sigterm');
    let server = await start(dataDir);
    let client = httpClient(server.url, { maxSockets: WORKERS + 2 });
    const session: Session = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
    const fixture = await createFixture(client, session.access, WORKERS, 'term');
    const state: LoadState = newLoadState(WORKERS + 6);
    let stopped = false;
    const workers = Array.from({ length: WORKERS }, (_, w) => runWorker({
      client, token: () => session.access, fixture, state, worker: w, seed: 9100 + w, keepGoing: () => !stopped,
    }));
    await sleep(600);
    // Six requests the server is in the middle of reading when the signal comes: headers parsed, half a body sent.
    const slow = Array.from({ length: 6 }, (_, k) => slowPatch(server.url, session.access, fixture.deviceIds[k % fixture.deviceIds.length], WORKERS + k, state));
    await Promise.all(slow.map((s) => s.started));
    await sleep(100);
    const exited = server.stop('SIGTERM');
    await sleep(300);
    for (const s of slow) s.finish();
    const answers = await Promise.all(slow.map((s) => s.answered));
    const code = await exited;
    stopped = true;
    await Promise.all(workers);
    client.close();
    assert.equal(code, 0, 'graceful stop exits 0');
    assert.deepEqual(answers, Array(6).fill(200), 'requests in flight at SIGTERM were answered');
    // Busy keep-alive clients are told Connection: close and then find the port closed: a request is either answered or
    // refused before it was sent, never reset on the way (the client could not know whether it was applied).
    const unanswered = state.writes.filter((w) => w.outcome === 'unknown');
    assert.deepEqual(unanswered.filter((w) => w.error !== 'ECONNREFUSED').map((w) => `${w.kind} w${w.worker}s${w.seq}: ${w.error}`), []);

    server = await start(dataDir);
    client = httpClient(server.url);
    const db = await openCheckDb(dataDir);
    try {
      await assertIntact(db, 'after SIGTERM');
      const access = (await client.request('GET', '/auth/accesstoken', { token: session.refresh })).text;
      const report = checkLedger(state.writes, await observe(client, access, fixture, WORKERS, db), 'after SIGTERM and restart');
      console.log(`sigterm: ${report.acked} writes acknowledged and verified after the restart (6 of them in flight at the signal); `
        + `${unanswered.length} refused by the closed port (never sent)`);
    } finally {
      await db.close();
      client.close();
      assert.equal(await server.stop(), 0);
    }
  });
});

/**
 * A PATCH the server is provably in the middle of: headers with `Expect: 100-continue`, and once the server has
 * answered "100 Continue" (it parsed them and runs the handler) half the body; `finish()` sends the rest. Recorded in
 * the ledger as the write of worker `worker`.
 */
function slowPatch(base: string, token: string, deviceId: number, worker: number, state: LoadState) {
  const url = new URL(base);
  const key = `w${worker}s0`;
  const w: Write = { kind: 'patch', worker, seq: 0, outcome: 'unknown', status: 0, deviceIds: [deviceId], key, value: worker * 1000 };
  state.writes.push(w);
  const body = JSON.stringify([{ op: 'add', path: `/${key}`, value: w.value }]);
  const half = Math.floor(body.length / 2);
  const socket = net.connect(Number(url.port), url.hostname);
  let text = '';
  let started!: () => void;
  const startedP = new Promise<void>((r) => { started = r; });
  socket.on('data', (c) => {
    text += c.toString();
    if (/^HTTP\/1\.1 100 /.test(text) && text.includes('\r\n\r\n')) started();
  });
  const answered = new Promise<number>((resolve) => {
    socket.on('close', () => {
      const finals = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1])).filter((s) => s !== 100);
      const status = finals[0] ?? 0;
      w.status = status;
      w.outcome = status === 0 ? 'unknown' : status >= 200 && status < 300 ? 'acked' : 'refused';
      resolve(status);
    });
    socket.on('error', () => {});
  });
  socket.on('connect', () => {
    socket.write(`PATCH /v1/device/${deviceId} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n`
      + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
  });
  startedP.then(() => socket.write(body.slice(0, half)), () => {});
  return { started: startedP, answered, finish: () => socket.write(body.slice(half)) };
}
