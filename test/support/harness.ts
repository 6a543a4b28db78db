// The pieces every hardening suite needs around the real executable: start it on a data dir, log in over HTTP, open
// its database from the test process (read-only: the server keeps its connection), check integrity, and a seeded
// random source so every run is reproducible.
//
// Both backends (test/run.mjs runs the suites once per backend, GRIDKEEPER_TEST_BACKEND): on SQLite a data dir's
// database is the file in it; on PostgreSQL it is a fresh EMPTY database on the test server, created the first time
// the data dir is started (the executable migrates it itself) and kept for its later starts, then dropped by
// dropDatabases(). Checks read through a CheckDb: the read-only better-sqlite3 file, or a pool on the database.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startBinary, type RunningBinary } from './binary.ts';
import type { HttpClient } from './http-client.ts';
import { emptyPostgres, testBackend } from './postgres.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { bindable, compileQuery, type Query } from '../../src/db/compile.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { migrations } from '../../src/db/migrate.ts';
import { decodeBlock, decodeStats, type BlockData } from '../../src/telemetry/blocks/index.ts';
import { mulberry32 } from './random.mjs';

export const ADMIN_EMAIL = 'admin@localhost';
export const ADMIN_PASSWORD = 'hardening-admin-password';

/** The storage backend under test. */
export const BACKEND = testBackend();

/** A database on the PostgreSQL test server. */
export interface PgDatabase { name: string; url: string; drop(): Promise<void> }

const databases = new Map<string, Promise<PgDatabase>>();

/** PostgreSQL only: the database of `dataDir`, created (empty) on first use. */
export function databaseOf(dataDir: string): Promise<PgDatabase> {
  assert.equal(BACKEND, 'postgres', 'databaseOf is for the PostgreSQL backend');
  let db = databases.get(dataDir);
  if (db === undefined) databases.set(dataDir, db = emptyPostgres());
  return db;
}

/** PostgreSQL only: `dataDir` uses `db` (e.g. one restored from a backup); dropDatabases() drops it too. */
export function attachDatabase(dataDir: string, db: PgDatabase): void {
  assert.ok(!databases.has(dataDir), `${dataDir} has a database already`);
  databases.set(dataDir, Promise.resolve(db));
}

/** The environment that points the executable (server or command) at `dataDir`'s database: nothing on SQLite. */
export async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  return BACKEND === 'postgres' ? { GRIDKEEPER_DATABASE_URL: (await databaseOf(dataDir)).url } : {};
}

/** Drops every database this process created or attached (PostgreSQL; nothing to do on SQLite). Call it in after/t.after. */
export async function dropDatabases(): Promise<void> {
  const all = [...databases.values()];
  databases.clear();
  for (const db of all) await (await db).drop();
}

/** Starts dist/gridkeeper (a copy at `exe`) on port 0 with `dataDir`; warn-level logs keep stdout small under load. */
export async function startGridkeeper(exe: string, dataDir: string, env: Record<string, string> = {}): Promise<RunningBinary> {
  return startBinary(exe, ['--data-dir', dataDir], { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'warn', ...await databaseEnv(dataDir), ...env });
}

/** The server's logged errors so far (route, request id, the error and its first frames), for assertion messages. */
export function serverErrors(run: RunningBinary): string[] {
  const out: string[] = [];
  for (const line of run.stdout) {
    if (!line.includes('"level":"error"')) continue;
    try {
      const e = JSON.parse(line) as { msg?: string; route?: string; error?: string; requestId?: string };
      out.push(`${e.route ?? ''} ${e.msg ?? ''} (request id ${e.requestId ?? '-'}): ${String(e.error ?? '').split('\n').slice(0, 8).map((l) => l.trim()).join(' ← ')}`);
    } catch { out.push(line.slice(0, 300)); }
  }
  return out;
}

/** kill -9 and wait until the process is gone. */
export async function kill9(run: RunningBinary): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  await run.stop('SIGKILL');
}

export interface Session {
  refresh: string;
  access: string;
}

/** POST /auth/login then GET /auth/accesstoken; asserts both succeed. */
export async function loginOver(client: HttpClient, username: string, password: string): Promise<Session> {
  const login = await client.request('POST', '/auth/login', { body: { username, password } });
  assert.equal(login.status, 200, `login ${username}: ${login.status} ${login.text}`);
  const access = await client.request('GET', '/auth/accesstoken', { token: login.text });
  assert.equal(access.status, 200, `access token for ${username}: ${access.status} ${access.text}`);
  return { refresh: login.text, access: access.text };
}

export function dataDbFile(dataDir: string): string {
  return join(dataDir, 'gridkeeper.db');
}

/** The data dir's database, opened from the test process. Read-only unless asked: the server owns the writes. */
export function openDataDb(file: string, options: { readonly?: boolean } = {}): Database.Database {
  const db = new Database(file, { readonly: options.readonly ?? true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * A read handle on a database for the tests' own checks, the same on both backends: `sql` templates (and builder
 * queries) compiled for the backend. On SQLite it reads through the read-only better-sqlite3 connection `sqlite`.
 */
export interface CheckDb {
  readonly backend: 'sqlite' | 'postgres';
  /** SQLite only: the read-only connection */
  readonly sqlite?: Database.Database;
  all<R>(query: Query<R>): Promise<R[]>;
  get<R>(query: Query<R>): Promise<R | undefined>;
  /** closing twice is harmless */
  close(): Promise<void>;
}

/** A CheckDb over a better-sqlite3 connection (see openDataDb). */
export function sqliteCheckDb(db: Database.Database): CheckDb {
  return {
    backend: 'sqlite',
    sqlite: db,
    all: async <R>(q: Query<R>) => { const c = compileQuery(q); return db.prepare(c.sql).all(...bindable(c.parameters)) as R[]; },
    get: async <R>(q: Query<R>) => { const c = compileQuery(q); return db.prepare(c.sql).get(...bindable(c.parameters)) as R | undefined; },
    close: async () => { db.close(); },
  };
}

export function postgresCheckDb(url: string): CheckDb {
  const db = openPostgres({ url, poolSize: 2 });
  return { backend: 'postgres', all: (q) => db.all(q), get: (q) => db.get(q), close: () => db.close() };
}

/** The database of `dataDir`, opened from the test process for reading (the file read-only, or the PostgreSQL database). */
export async function openCheckDb(dataDir: string): Promise<CheckDb> {
  if (BACKEND === 'postgres') return postgresCheckDb((await databaseOf(dataDir)).url);
  return sqliteCheckDb(openDataDb(dataDbFile(dataDir)));
}

/** The database of `dataDir`, opened through the Db seam for writing (only while the server is stopped). */
export async function openWritableDb(dataDir: string): Promise<Db> {
  if (BACKEND === 'postgres') return openPostgres({ url: (await databaseOf(dataDir)).url, poolSize: 2 });
  return openDatabase({ file: dataDbFile(dataDir) });
}

/**
 * A copy made by `gridkeeper backup`, ready to be checked and served: on SQLite the file itself (read-only); on
 * PostgreSQL the pg_dump archive restored with pg_restore into a fresh empty database (`database`; drop() removes it).
 */
export async function openBackup(file: string): Promise<{ db: CheckDb; database?: PgDatabase; drop(): Promise<void> }> {
  if (BACKEND === 'sqlite') {
    const db = sqliteCheckDb(openDataDb(file));
    return { db, drop: () => db.close() };
  }
  const database = await emptyPostgres();
  try {
    await new Promise<void>((resolve, reject) => {
      execFile('pg_restore', ['--exit-on-error', '--no-owner', `--dbname=${database.url}`, file], { timeout: 120_000 },
        (err, _out, stderr) => (err ? reject(new Error(`pg_restore ${file}: ${err.message} ${stderr}`)) : resolve()));
    });
  } catch (err) {
    await database.drop();
    throw err;
  }
  const db = postgresCheckDb(database.url);
  return { db, database, async drop() { await db.close(); await database.drop(); } };
}

/**
 * SQLite: PRAGMA integrity_check and foreign_key_check of the file. PostgreSQL checks pages and foreign keys itself;
 * there: every migration is applied, the root role has a member, and no relation row points at a missing row.
 */
export async function assertIntact(db: CheckDb, what: string): Promise<void> {
  await assertWholeBlocks(db, what);
  if (db.backend === 'sqlite') {
    const integrity = db.sqlite!.pragma('integrity_check') as { integrity_check: string }[];
    assert.deepEqual(integrity.map((r) => r.integrity_check), ['ok'], `${what}: integrity_check`);
    const fk = db.sqlite!.pragma('foreign_key_check') as unknown[];
    assert.deepEqual(fk, [], `${what}: foreign_key_check`);
    return;
  }
  const applied = (await db.all(sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY name`)).map((r) => r.name);
  assert.deepEqual(applied, migrations.map((m) => m.name).sort(), `${what}: migrations`);
  const row = await db.get(sql<Record<string, number>>`SELECT
      (SELECT count(*) FROM members m JOIN users u ON u.id = m.user_id WHERE m.role_id = 1) AS root_members,
      (SELECT count(*) FROM members m WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = m.user_id)
        OR NOT EXISTS (SELECT 1 FROM roles r WHERE r.id = m.role_id)) AS orphan_members,
      (SELECT count(*) FROM manages x WHERE NOT EXISTS (SELECT 1 FROM roles r WHERE r.id = x.parent_role_id)
        OR NOT EXISTS (SELECT 1 FROM roles r WHERE r.id = x.child_role_id)) AS orphan_manages,
      (SELECT count(*) FROM monitors x WHERE NOT EXISTS (SELECT 1 FROM roles r WHERE r.id = x.role_id)
        OR NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = x.device_id)) AS orphan_monitors,
      (SELECT count(*) FROM license_datalink x WHERE NOT EXISTS (SELECT 1 FROM licenses l WHERE l.id = x.license_id)
        OR NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = x.device_id)) AS orphan_links`);
  assert.ok(row!.root_members >= 1, `${what}: the root role has a member`);
  assert.deepEqual({ ...row, root_members: 0 }, { root_members: 0, orphan_members: 0, orphan_manages: 0, orphan_monitors: 0, orphan_links: 0 }, `${what}: relations`);
}

/** Sealed telemetry blocks written so far (assertWholeBlocks), for a suite to show that it sealed under its load. */
export const blocksChecked = { blocks: 0, rows: 0 };

/**
 * No half block: every sealed block decodes whole, its statistics too, and its row count, first and last times are
 * those of its row in telemetry_blocks.
 */
async function assertWholeBlocks(db: CheckDb, what: string): Promise<void> {
  const blocks = await db.all(sql<{ series_id: number; start_ms: number; rows: number; first_ms: number; last_ms: number; stats: Uint8Array; data: Uint8Array }>`
    SELECT series_id, start_ms, rows, first_ms, last_ms, stats, data FROM telemetry_blocks`);
  for (const b of blocks) {
    const at = `${what}: the block of series ${b.series_id} at ${b.start_ms}`;
    let decoded: BlockData;
    try {
      decoded = decodeBlock(new Uint8Array(b.data));
      decodeStats(new Uint8Array(b.stats));
    } catch (err) {
      assert.fail(`${at} does not decode: ${String(err)}`);
    }
    assert.deepEqual([decoded.ms.length, decoded.ms[0], decoded.ms[decoded.ms.length - 1]], [Number(b.rows), Number(b.first_ms), Number(b.last_ms)], at);
    blocksChecked.blocks++;
    blocksChecked.rows += decoded.ms.length;
  }
}

/** A seeded generator with integer and pick helpers; the same seed gives the same run. */
export function seeded(seed: number): { next(): number; int(lo: number, hi: number): number; pick<T>(xs: readonly T[]): T } {
  const next = mulberry32(seed);
  return {
    next,
    /** an integer in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return n;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
