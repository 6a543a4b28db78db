// Runs every test file under test/ with node:test, once per storage backend: the embedded SQLite database, then
// PostgreSQL (each test app gets a fresh database on the server at GRIDKEEPER_TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres; see test/support/postgres.ts). Node 20's --test takes no globs, so the
// files are listed here.
// Usage: node test/run.mjs [--backend=sqlite|postgres] [substring ...]  — only files whose path contains a substring.
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { ensureSystemPackages } from './support/system-packages.mjs';
import { bundleTests } from './support/bundle-tests.mjs';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--backend='))?.slice('--backend='.length);
const filters = args.filter((a) => !a.startsWith('--backend='));
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) { if (name !== 'support') walk(p); }
    else if (name.endsWith('.test.ts')) files.push(relative(root, p));
  }
})(join(root, 'test'));
// The files that take longest (tens of seconds each) start first, so that the run does not end waiting on one of them
// while the other workers sit idle; the rest follow in name order.
const LONGEST_FIRST = [
  'test/release/arm64.test.ts', 'test/release/deb.test.ts', 'test/hardening/concurrency.test.ts', 'test/access/oracle.test.ts', 'test/hardening/cross-tenant.test.ts',
  'test/hardening/durability.test.ts', 'test/hardening/operations.test.ts', 'test/hardening/fuzz.test.ts',
  'test/console/browser.test.ts', 'test/hardening/cluster.test.ts', 'test/access/readable-cache.test.ts',
  'test/access/explain.test.ts', 'test/hardening/login-concurrency.test.ts', 'test/code/',
];
const rank = (f) => {
  const i = LONGEST_FIRST.findIndex((prefix) => f.startsWith(prefix));
  return i < 0 ? LONGEST_FIRST.length : i;
};
files.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
const chosen = filters.length ? files.filter((f) => filters.some((s) => f.includes(s))) : files;
if (chosen.length === 0) { console.error('no test files matched'); process.exit(1); }

// What the PostgreSQL pass does not run, and why, besides the files that never read the backend (below). Everything
// else runs on both backends.
const SQLITE_ONLY = [
  ['test/db/open.test.ts', 'the SQLite backend\'s own tests'],
  ['test/db/group-commit.test.ts', 'the SQLite backend\'s own tests'],
  ['test/db/postgres.test.ts', 'always on PostgreSQL: it runs in the first pass already'],
  ['test/db/copy.test.ts', 'uses both backends itself: it runs in the first pass already'],
  ['test/code/', 'reads the source, not a database'],
  ['test/influxql/', 'the parser alone: no database'],
  ['test/e2e/', 'drives the built executable on its data dir'],
  ['test/console/browser.test.ts', 'drives the built executable in Chromium'],
  ['test/console/webhooks-browser.test.ts', 'drives the built executable in Chromium'],
  ['test/console/alarms-browser.test.ts', 'drives the built executable in Chromium'],
  ['test/release/', 'builds and drives the release\'s executables and packages'],
];

const TEST_SERVER_URL = process.env.GRIDKEEPER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function requirePostgres() {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    console.error(`test/run.mjs: the PostgreSQL half of the suite needs a server at GRIDKEEPER_TEST_DATABASE_URL (${TEST_SERVER_URL}): ${err.message}\n`
      + 'On the project\'s machines start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start');
    process.exit(1);
  } finally {
    await client.end().catch(() => {});
  }
}

// This run's id: every database its tests make on the PostgreSQL server starts with gk_test_<run>_ (test/support/postgres.ts)
const RUN = process.env.GRIDKEEPER_TEST_RUN ?? Math.random().toString(36).slice(2, 10);

/** Drops the databases whose name starts with `prefix` on the test server. */
async function dropDatabases(prefix) {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    return rows.length;
  } finally {
    await client.end();
  }
}

// Test files run at once: one per core (GRIDKEEPER_TEST_CONCURRENCY to change). Three on the 2-core reference
// machine finished the PostgreSQL pass only 3 % sooner, and starved the kill -9 suite of the write load it needs.
const CONCURRENCY = Number(process.env.GRIDKEEPER_TEST_CONCURRENCY ?? Math.max(2, availableParallelism()));

// The test files run bundled (test/support/bundle-tests.mjs): built once for both passes, removed at the end.
const BUNDLE_ROOT = join(root, 'node_modules/.cache/gridkeeper-tests');
const BUNDLES = join(BUNDLE_ROOT, RUN);
const bundleOf = new Map();

/** Removes the bundles of runs that ended without removing theirs (interrupted) more than a day ago. */
function removeStaleBundles() {
  let runs = [];
  try { runs = readdirSync(BUNDLE_ROOT); } catch { return; }
  for (const name of runs) {
    const dir = join(BUNDLE_ROOT, name);
    if (Date.now() - statSync(dir).mtimeMs > 86_400_000) rmSync(dir, { recursive: true, force: true });
  }
}

function pass(backend, list) {
  console.log(`\n=== test files on ${backend}: ${list.length} ===\n`);
  const times = join(BUNDLES, `times-${backend}.txt`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [
    ...(process.env.GRIDKEEPER_TEST_SOURCE_MAPS === '1' ? ['--enable-source-maps'] : []),
    '--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./test/support/file-times-reporter.mjs', `--test-reporter-destination=${times}`,
    ...list.map((f) => bundleOf.get(f)),
  ], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      GRIDKEEPER_LOG: process.env.GRIDKEEPER_LOG ?? 'error',
      GRIDKEEPER_CHECK_DB_HANDLES: '1',
      GRIDKEEPER_TEST_BACKEND: backend,
      GRIDKEEPER_TEST_RUN: RUN,
    },
  });
  const slowest = existsSync(times) ? readFileSync(times, 'utf8').split('\n').filter(Boolean).slice(0, 8) : [];
  console.log(`\n=== ${backend}: ${((Date.now() - started) / 1000).toFixed(0)} s; the slowest files (s of tests) ===\n`
    + slowest.map((line) => {
      const [seconds, file] = line.split('\t');
      return `${seconds.padStart(7)}  ${relative(BUNDLES, file).replace(/\.mjs$/, '.ts')}`;
    }).join('\n'));
  return r.status ?? 1;
}

ensureSystemPackages();
await requirePostgres();
removeStaleBundles();
const bundled = Date.now();
const bundles = await bundleTests(root, chosen, BUNDLES);
bundles.forEach((b, i) => bundleOf.set(chosen[i], b.path));
// A file whose code never reaches the module that reads the backend (test/support/postgres.ts) is the same test on
// both: it runs once, in the first pass.
const sameOnBoth = new Set(chosen.filter((_, i) => !bundles[i].usesBackend));
console.log(`test/run.mjs: bundled ${chosen.length} test files in ${((Date.now() - bundled) / 1000).toFixed(1)} s; `
  + `${sameOnBoth.size} of them never read the backend`);
let status = 0;
// `--backend=postgres` alone runs them there: the pass is then the only one
const firstPass = only === undefined || only === 'sqlite';
if (firstPass) status ||= pass('sqlite', chosen);
const onPostgres = chosen.filter((f) => !SQLITE_ONLY.some(([prefix]) => f.startsWith(prefix)) && !(firstPass && sameOnBoth.has(f)));
if ((only === undefined || only === 'postgres') && onPostgres.length > 0) status = pass('postgres', onPostgres) || status;
// the run's pool of test databases (test/support/postgres.ts), and any a test never closed (or was killed holding)
rmSync(BUNDLES, { recursive: true, force: true });
const left = await dropDatabases(`gk_test_${RUN}_`);
if (left > 0) console.log(`test/run.mjs: dropped the run's ${left} test database(s)`);
process.exit(status);
