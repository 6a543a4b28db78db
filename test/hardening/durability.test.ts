// Durability of acknowledged writes: the real executable under a mixed write load (device PATCHes, new devices, member
// changes, license creation/activation/claims, telemetry) is killed with SIGKILL at seeded random moments, restarted
// on the same data dir, and every write that got a 2xx must be there with the value written (read back through the
// API, licenses from the database file), every unanswered one entirely or not at all, and the database must pass
// PRAGMA integrity_check; every sealed block decodes whole (the load writes into closed days, which the server seals
// every second: kills land in seals and block rewrites). A few kills land right after the start, before the load has
// warmed up.
// On PostgreSQL (GRIDKEEPER_TEST_BACKEND=postgres) the kill -9 hits the gridkeeper process only — the database server
// survives — and every acknowledged write must be in the database.
//
// KILLS (default 20), WORKERS (default 12), DURABILITY_SEED (default 20261121).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { openDatabase } from '../../src/db/open.ts';
import { httpClient } from '../support/http-client.ts';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, BACKEND, assertIntact, blocksChecked, databaseEnv, dropDatabases, envInt, kill9, loginOver, openCheckDb, seeded, serverErrors,
  sleep, startGridkeeper,
} from '../support/harness.ts';
import { checkLedger, createFixture, newLoadState, observe, runWorker, type Fixture, type LedgerReport, type LoadState } from './write-load.ts';

const KILLS = envInt('KILLS', 20);
const WORKERS = envInt('WORKERS', 12);
const SEED = envInt('DURABILITY_SEED', 20261121);

const acked = (state: LoadState) => state.writes.reduce((n, w) => n + (w.outcome === 'acked' ? 1 : 0), 0);

test(`${KILLS} kill -9 under a mixed write load: every acknowledged write survives, integrity ok`, { timeout: 240_000 }, async (t) => {
  t.after(dropDatabases);
  const { dir, exe } = isolatedBinary();
  const dataDir = join(dir, 'data');
  const rnd = seeded(SEED);
  const state = newLoadState(WORKERS);
  let fixture: Fixture | undefined;
  let refresh = '';
  let report: LedgerReport | undefined;
  let kills = 0;
  let minimumAcked = 0;
  let run: RunningBinary | undefined;
  const errors: string[] = [];
  try {
    for (let epoch = 0; epoch <= KILLS; epoch++) {
      if (run) errors.push(...serverErrors(run));
      // sealing every second: the load writes into 40 closed days, so kills land in seals and block rewrites too
      run = await startGridkeeper(exe, dataDir, { GRIDKEEPER_TELEMETRY_SEAL_INTERVAL: '1s' });
      const client = httpClient(run.url, { maxSockets: WORKERS + 2 });
      let access: string;
      if (epoch === 0) {
        const session = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
        refresh = session.refresh;
        access = session.access;
        fixture = await createFixture(client, access, WORKERS, 'dur');
      } else {
        // the refresh token outlives every kill: keys and sessions are in the database
        const a = await client.request('GET', '/auth/accesstoken', { token: refresh });
        assert.equal(a.status, 200, `access token after restart ${epoch}: ${a.status} ${a.text}`);
        access = a.text;
      }
      // After each restart, before new load: every acknowledged write is back, and the file is intact.
      const db = await openCheckDb(dataDir);
      try {
        await assertIntact(db, `after restart ${epoch}`);
        report = checkLedger(state.writes, await observe(client, access, fixture!, WORKERS, db), `after restart ${epoch}`);
      } finally {
        await db.close();
      }
      if (epoch === KILLS) break;

      // Load, then SIGKILL at a seeded moment: mostly mid-load, once a seeded number of this epoch's writes have been
      // acknowledged and a seeded few milliseconds more have passed (a count, not a time, so that a slow machine loads
      // as much as a fast one); sometimes right after the start, before the load has warmed up.
      const early = rnd.next() < 0.15;
      const ackedBefore = acked(state);
      const target = early ? 0 : rnd.int(8, 30);
      const delay = early ? rnd.int(0, 40) : rnd.int(0, 30);
      minimumAcked += target;
      let killed = false;
      const token = access;
      const workers = Array.from({ length: WORKERS }, (_, w) => runWorker({
        client, token: () => token, fixture: fixture!, state, worker: w, seed: SEED * 31 + epoch * 1009 + w, keepGoing: () => !killed,
      }));
      const giveUp = Date.now() + 20_000;
      while (acked(state) - ackedBefore < target && Date.now() < giveUp) await sleep(5);
      await sleep(delay);
      await kill9(run);
      killed = true;
      kills++;
      await Promise.all(workers);
      client.close();
    }
    // A last graceful stop leaves a clean database too.
    assert.equal(await run!.stop('SIGTERM'), 0);
    const db = await openCheckDb(dataDir);
    try { await assertIntact(db, 'after the final stop'); } finally { await db.close(); }

    const fiveHundreds = [...state.statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    const unexpected = [...state.statuses].filter(([s]) => s !== 0 && (s < 200 || s >= 300));
    console.log(`durability: ${kills} kills survived; ${report!.acked} writes acknowledged and verified (${JSON.stringify(report!.byKind)}); `
      + `${report!.unknown} unanswered (all-or-nothing checked); statuses ${JSON.stringify(Object.fromEntries(state.statuses))}`);
    assert.equal(kills, KILLS);
    assert.equal(report!.verified, report!.acked);
    assert.ok(blocksChecked.blocks > 0, 'sealing ran under the load: blocks were checked whole after the kills');
    console.log(`durability: ${blocksChecked.blocks} sealed blocks (${blocksChecked.rows} points) checked whole over ${KILLS + 2} checks`);
    errors.push(...serverErrors(run!));
    assert.equal(fiveHundreds, 0, `5xx answers; the server logged: ${errors.slice(0, 5).join(' | ')}`);
    assert.deepEqual(unexpected, [], 'every answered write succeeded');
    assert.ok(minimumAcked >= KILLS * 10, `the seeded load is meaningful: ${minimumAcked} writes to acknowledge`);
    assert.ok(report!.acked >= minimumAcked, `a meaningful load: ${report!.acked} acknowledged writes, ${minimumAcked} wanted`);
  } finally {
    if (run) await kill9(run);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kill -9 during the first start (migrations, keys, bootstrap): the next start completes it', { timeout: 120_000 }, async (t) => {
  t.after(dropDatabases);
  const { dir, exe } = isolatedBinary();
  const rnd = seeded(SEED + 1);
  try {
    for (let i = 0; i < 8; i++) {
      const dataDir = join(dir, `first-${i}`);
      // the executable alone, killed at a seeded moment of its first start, before or after it listens
      const child = spawn(exe, ['--data-dir', dataDir], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GRIDKEEPER_PORT: '0', GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'warn', ...await databaseEnv(dataDir) },
        stdio: 'ignore',
      });
      const exited = new Promise((r) => child.once('exit', r));
      await sleep(rnd.int(5, 400));
      child.kill('SIGKILL');
      await exited;
      const run = await startGridkeeper(exe, dataDir);
      const client = httpClient(run.url);
      try {
        const s = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
        const roles = await client.request('POST', '/v1/role/query', { token: s.access, body: {} });
        assert.equal(roles.status, 200);
        assert.deepEqual(roles.body.role.map((r: { id: number; name: string }) => [r.id, r.name]), [[1, 'root']]);
      } finally {
        client.close();
        assert.equal(await run.stop(), 0);
      }
      const db = await openCheckDb(dataDir);
      try { await assertIntact(db, `first start ${i}`); } finally { await db.close(); }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the settings behind the guarantee: WAL, synchronous=FULL (fsync of the WAL on every commit), foreign keys, busy timeout', {
  skip: BACKEND === 'postgres' ? 'the embedded SQLite database\'s own settings (PostgreSQL commits durably by its own configuration)' : false,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-settings-'));
  try {
    const db = openDatabase({ file: join(dir, 'settings.db') });
    try {
      assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      // 2 = FULL: with NORMAL a commit acknowledged just before a power cut could be lost
      assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 2);
      assert.equal(db.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.sqlite.pragma('busy_timeout', { simple: true }), 5000);
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
