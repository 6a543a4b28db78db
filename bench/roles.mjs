// Issue 4 figures on a 10,000-role / 100,000-device / 200,000-monitors installation, a DAG 12 levels deep
// (bench/lib/installation.mjs: distributor -> installer -> customer -> site -> ...):
//  (a) one rights check (user, device, property) in process: p50/p99 (aim p99 < 1 ms) — for users who hold the right
//      (found through the device's owner and its ancestors) and for random (user, device) pairs (mostly refused);
//      also one check of a right over a role;
//  (b) POST /v1/role/query over HTTP (the real server, a separate process on loopback) for a member of a distributor
//      (near the top: reaches ~2,500 roles), with and without userRights, and for the root member (all 10,000 roles);
//  peak RSS of the server (aim < 300 MB) and of this process; EXPLAIN QUERY PLAN of the hot queries, flagging any full
//  scan of a table. The database has no ANALYZE statistics, like a production one. Bounded: about a minute in all.
// Run: node --import ./test/support/register.mjs bench/roles.mjs   (SEED=, CHECKS=, QUERY_RUNS= to vary)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/boot/runtime.ts';
import { parseConfig } from '../src/lib/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { hashSecret } from '../src/auth/passwords.ts';
import { authorizersWithRight, canReadProperty, deviceAccess, readableDevices, reach, reaches, rightsOverReach } from '../src/access/rights.ts';
import { explainDeviceAccess, explainRoleRight } from '../src/access/explain.ts';
import { queryRoles } from '../src/roles/role-query.ts';
import { managesFromParents, wouldCycle } from '../src/roles/manages.store.ts';
import { membersOfRoles } from '../src/roles/members.store.ts';
import { writeRoleInstallation, ancestorAtLevel, levelOf, BENCH_PROPERTIES } from './lib/installation.mjs';
import { percentile, rssOf } from './lib/load.mjs';
import { queryPlan, recordStatements } from './lib/query-plans.mjs';
import pg from 'pg';
import { benchDatabase } from './lib/postgres.mjs';
import { openPostgres } from '../src/db/postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { copyInstallation } from '../src/db/copy.ts';
import { telemetryCopy } from '../src/telemetry/telemetry-copy.store.ts';
import { accessToken, call } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SEED = Number(process.env.SEED ?? 1);
const CHECKS = Number(process.env.CHECKS ?? 20_000);
const QUERY_RUNS = Number(process.env.QUERY_RUNS ?? 60);
const ADMIN_PASSWORD = 'bench-admin-password-1';
const USER_PASSWORD = 'bench-user-password-1';
const ms = (n) => `${n.toFixed(n < 1 ? 3 : 1)} ms`;
const mb = (kb) => `${(kb / 1024).toFixed(0)} MB`;

const rng = mulberry32;

/** Times fn (async: every store call is) over each input, after a warm-up on the first ones; p50/p99 in milliseconds. */
async function timeEach(inputs, fn) {
  for (const x of inputs.slice(0, Math.min(2000, inputs.length))) await fn(x);
  const times = new Float64Array(inputs.length);
  let yes = 0;
  for (let i = 0; i < inputs.length; i++) {
    const t0 = process.hrtime.bigint();
    if (await fn(inputs[i])) yes++;
    times[i] = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  times.sort();
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], yes: yes / inputs.length };
}

const TABLES = /^(?:SCAN) (roles|manages|members|monitors|devices|users|license_datalink)\b/;

/** Prints the plan of every distinct statement `fn(db)` runs (see lib/query-plans.mjs); returns the full scans. */
async function printPlans(db, label, fn) {
  console.log(`\n  ${label}`);
  let fullScans = 0;
  for (const [sqlText, args] of await recordStatements(db, fn)) {
    console.log(`    SQL: ${sqlText.replace(/\s+/g, ' ').trim().slice(0, 240)}`);
    const rows = queryPlan(db, sqlText, args);
    const depth = new Map([[0, 0]]);
    for (const r of rows) {
      depth.set(r.id, (depth.get(r.parent) ?? 0) + 1);
      const full = TABLES.test(r.detail);
      if (full) fullScans++;
      console.log(`      ${'  '.repeat(depth.get(r.id) - 1)}${r.detail}${full ? '   <-- FULL SCAN' : ''}`);
    }
  }
  return fullScans;
}

/** (a) on one backend: the same inputs, the same engine functions. */
async function rightsChecks(db, backend, { held, random, roleChecks }) {
  const check = async ({ u, d, p }) => canReadProperty(await deviceAccess(db, u, d), p);
  console.log(`\n(a) one rights check in process on ${backend}, ${held.length} each (p50 / p99 / max):`);
  const out = {};
  for (const [label, inputs, fn] of [
    ['device property, users of the owner\'s ancestors', held, check],
    ['device property, random (user, device)', random, check],
    ['deviceManagement over a deep role (either), top users', roleChecks, async ({ u, r }) => (await authorizersWithRight(db, u, r, 'deviceManagement', 'either')).length > 0],
  ]) {
    const s = await timeEach(inputs, fn);
    out[label] = s;
    console.log(`    ${label.padEnd(56)} ${ms(s.p50).padStart(9)} / ${ms(s.p99).padStart(9)} / ${ms(s.max).padStart(9)}   (${(s.yes * 100).toFixed(1)}% allowed)`);
  }
  return out;
}

const PG_TABLES = /Seq Scan on (roles|manages|members|monitors|devices|users|license_datalink)\b/;

/** PostgreSQL's EXPLAIN of every distinct statement `fn(db)` runs; returns the sequential scans of big tables. */
async function printPlansPostgres(db, client, label, fn) {
  console.log(`\n  ${label}`);
  let fullScans = 0;
  for (const [sqlText, args] of await recordStatements(db, fn)) {
    // compiled by the PostgreSQL handle's own builder: its text and parameters as the server gets them
    const q = { text: sqlText, values: args };
    console.log(`    SQL: ${q.text.replace(/\s+/g, ' ').trim().slice(0, 240)}`);
    const rows = (await client.query(`EXPLAIN (COSTS OFF) ${q.text}`, q.values)).rows;
    for (const r of rows) {
      const line = r['QUERY PLAN'];
      const full = PG_TABLES.test(line);
      if (full) fullScans++;
      console.log(`      ${line}${full ? '   <-- FULL SCAN' : ''}`);
    }
  }
  return fullScans;
}

async function roleQuery(url, token, body) {
  const times = [];
  let count = 0;
  let bytes = 0;
  for (let i = 0; i < QUERY_RUNS + 3; i++) {
    const t0 = performance.now();
    const text = await call(url, 'POST', '/v1/role/query', { token, body });
    if (i >= 3) times.push(performance.now() - t0); // three warm-ups
    bytes = text.length;
    count = JSON.parse(text).role.length;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), count, bytes };
}

const started = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'gridkeeper-bench-roles-'));
let server;
try {
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_LOG: 'error' }, []);
  const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
  await createDeps({ config, db, log: createLogger('error') }); // migrations, root role, admin

  let t0 = performance.now();
  const layout = writeRoleInstallation(db.sqlite, { seed: SEED });
  const counts = db.sqlite.prepare(`SELECT (SELECT count(*) FROM roles) r, (SELECT count(*) FROM manages) m, (SELECT count(*) FROM devices) d,
    (SELECT count(*) FROM monitors) mo, (SELECT count(*) FROM users) u, (SELECT count(*) FROM members) mb`).get();
  console.log(`installation (seed ${SEED}): ${counts.r} roles in ${layout.byLevel.length} levels (${layout.byLevel.map((l) => l.length).join('/')}), `
    + `${counts.m} manages, ${counts.d} devices, ${counts.mo} monitors, ${counts.u} users / ${counts.mb} members — written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const userOfRole = new Map(layout.users.map((u) => [u.roleId, u.id]));
  const distributorUser = layout.users.find((u) => u.level === 1);
  const benchEmail = db.sqlite.prepare('SELECT email FROM users WHERE id = ?').pluck().get(distributorUser.id);
  db.sqlite.prepare('UPDATE users SET password_hash = ? WHERE id = ?').run(await hashSecret(USER_PASSWORD), distributorUser.id);

  // ---- (a) single rights checks in process ----
  const rand = rng(SEED * 31 + 7);
  const prop = () => BENCH_PROPERTIES[Math.floor(rand() * BENCH_PROPERTIES.length)];
  const held = Array.from({ length: CHECKS }, () => {
    const d = 1 + Math.floor(rand() * layout.devices);
    const owner = layout.ownerOfDevice[d];
    const level = 1 + Math.floor(rand() * 3);
    return { u: userOfRole.get(ancestorAtLevel(layout, owner, level)), d, p: prop() };
  });
  const random = Array.from({ length: CHECKS }, () => ({
    u: layout.users[Math.floor(rand() * layout.users.length)].id, d: 1 + Math.floor(rand() * layout.devices), p: prop(),
  }));
  const deepRoles = layout.byLevel.slice(4).flat();
  const roleChecks = Array.from({ length: CHECKS }, () => ({
    u: layout.users[Math.floor(rand() * 445)].id, r: deepRoles[Math.floor(rand() * deepRoles.length)],
  }));
  const checks = { held, random, roleChecks };
  const sqliteChecks = await rightsChecks(db, 'embedded SQLite', checks);

  // ---- query plans of the hot queries ----
  const top = distributorUser.id;
  const someDevice = held[0].d;
  const someRole = roleChecks[0].r;
  const topReach = await reach(db, top);
  console.log('\nEXPLAIN QUERY PLAN of the hot queries (a table SCAN is flagged):');
  let fullScans = 0;
  fullScans += await printPlans(db, 'rights check on a device (deviceAccess)', (db) => deviceAccess(db, top, someDevice));
  fullScans += await printPlans(db, 'right over a role (authorizersWithRight) and visibility (reaches)', async (db) => {
    await authorizersWithRight(db, top, someRole, 'roleManagement', 'either'); await reaches(db, top, someRole);
  });
  fullScans += await printPlans(db, 'POST /v1/role/query: reach, rightsOverReach, roles by id, descendants', async (db) => {
    await queryRoles(db, top, {}, {}); await queryRoles(db, top, { ancestorRoleId: [topReach[1]] }, { roleManagement: true });
  });
  fullScans += await printPlans(db, 'manages / member queries (relations of a role set)', async (db) => {
    await managesFromParents(db, topReach); await membersOfRoles(db, topReach); await wouldCycle(db, someRole, top);
  });
  fullScans += await printPlans(db, 'explain (ancestor subgraph)', async (db) => {
    await explainRoleRight(db, top, someRole, 'deviceManagement', 'either'); await explainDeviceAccess(db, top, someDevice, 'read', 'name');
  });
  fullScans += await printPlans(db, 'device list (readableDevices, used by POST /v1/device/query), with and without an id list', async (db) => {
    await readableDevices(db, top, [someDevice]); await readableDevices(db, top);
  });
  console.log(`\n  full table scans in hot queries: ${fullScans}`);

  // ---- the same on PostgreSQL: the installation copied over (gridkeeper copy's code), the same checks and plans ----
  const summary = { sqlite: sqliteChecks };
  if (process.env.NO_PG !== '1') {
    const database = await benchDatabase(`gk_bench_roles_${process.pid}`);
    const pgDb = openPostgres({ url: database.url, poolSize: 2 });
    const client = new pg.Client({ connectionString: database.url });
    try {
      await migrate(pgDb, Date.now());
      t0 = performance.now();
      await copyInstallation(db, pgDb, { telemetry: telemetryCopy });
      await pgDb.script('ANALYZE');
      console.log(`\ncopied into PostgreSQL in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      summary.postgres = await rightsChecks(pgDb, 'PostgreSQL (loopback, one connection at a time)', checks);
      await client.connect();
      console.log('\nEXPLAIN of the hot queries on PostgreSQL (a Seq Scan of a big table is flagged):');
      let pgScans = 0;
      pgScans += await printPlansPostgres(pgDb, client, 'rights check on a device (deviceAccess)', (db) => deviceAccess(db, top, someDevice));
      pgScans += await printPlansPostgres(pgDb, client, 'right over a role (authorizersWithRight) and visibility (reaches)', async (db) => {
        await authorizersWithRight(db, top, someRole, 'roleManagement', 'either'); await reaches(db, top, someRole);
      });
      pgScans += await printPlansPostgres(pgDb, client, 'POST /v1/role/query: reach, rightsOverReach, roles by id, descendants', async (db) => {
        await queryRoles(db, top, {}, {}); await queryRoles(db, top, { ancestorRoleId: [topReach[1]] }, { roleManagement: true });
      });
      pgScans += await printPlansPostgres(pgDb, client, 'device list (readableDevices), with and without an id list', async (db) => {
        await readableDevices(db, top, [someDevice]); await readableDevices(db, top);
      });
      console.log(`\n  full table scans in hot queries on PostgreSQL: ${pgScans}`);
    } finally {
      await client.end().catch(() => {});
      await pgDb.close();
      await database.drop();
    }
    const key = 'device property, users of the owner\'s ancestors';
    console.log(`\nrights check p99, PostgreSQL / SQLite: ${(summary.postgres[key].p99 / summary.sqlite[key].p99).toFixed(1)}x (aim on PostgreSQL: p99 < 2 ms)`);
  }
  const inProcessPeak = process.resourceUsage().maxRSS;
  await db.close();

  // ---- (b) POST /v1/role/query over HTTP ----
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir };
  server = await startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'src/main.ts'), 'serve'], { env, timeoutMs: 60_000 });
  const userToken = await accessToken(server.url, benchEmail, USER_PASSWORD);
  const adminToken = await accessToken(server.url, 'admin@localhost', ADMIN_PASSWORD);
  const allRights = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
  console.log(`\n(b) POST /v1/role/query over HTTP, ${QUERY_RUNS} sequential requests each (p50 / p99):`);
  for (const [label, token, body] of [
    [`distributor member (level ${levelOf(layout.byLevel, distributorUser.roleId)}), {}`, userToken, {}],
    ['distributor member, userRights: all six', userToken, { userRights: allRights }],
    ['root member (every role), {}', adminToken, {}],
    ['root member, userRights: all six', adminToken, { userRights: allRights }],
  ]) {
    const s = await roleQuery(server.url, token, body);
    console.log(`    ${label.padEnd(44)} ${ms(s.p50).padStart(9)} / ${ms(s.p99).padStart(9)}   ${s.count} roles, ${(s.bytes / 1024).toFixed(0)} KiB`);
  }
  const rss = rssOf(server.child.pid);
  console.log(`\npeak RSS: server ${rss.peak.toFixed(0)} MB (now ${rss.rss.toFixed(0)} MB); this process (generator + in-process checks) ${mb(inProcessPeak)}`);
} finally {
  if (server) await server.stop();
  rmSync(dir, { recursive: true, force: true });
  console.log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
