// The command line: settings parsing (exit 2 on a bad value), migrate, user add, license create, telemetry prune, backup,
// version, help. Every command that works on a data dir runs on the backend under test (test/run.mjs runs this file
// once per backend): on PostgreSQL it also gets GRIDKEEPER_DATABASE_URL of a fresh EMPTY database (databaseEnv), and
// its side effects are read back from that database (openCheckDb), not from the data dir.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql, type RawBuilder } from 'kysely';
import { runCli } from '../../src/boot/cli.ts';
import { parseConfig, ConfigError } from '../../src/lib/config.ts';
import { migrations } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/open.ts';
import { writeLineProtocol } from '../../src/telemetry/ingest.ts';
import { shardTableName } from '../../src/telemetry/sqlite/catalogue.ts';
import { settleReads } from '../../src/telemetry/reads.ts';
import { BINARY } from '../support/binary.ts';
import { testBackend } from '../support/postgres.ts';
import { databaseEnv, dropDatabases, openBackup, openCheckDb, openWritableDb, type CheckDb } from '../support/harness.ts';

const DAY = 86_400_000;
const ON_POSTGRES = testBackend() === 'postgres';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'gk-cli-'));
}

/**
 * A data dir of the backend under test: the directory, the environment that points a command at its database (nothing
 * on SQLite; GRIDKEEPER_DATABASE_URL of a fresh empty database on PostgreSQL), and `check()`: that database opened for
 * the test's checks (the file read-only, or the PostgreSQL database). After the test the handles close, then the
 * database and the directory go.
 */
async function dataDir(t: { after(fn: () => unknown): void }): Promise<{ dir: string; env: Record<string, string>; check(): Promise<CheckDb> }> {
  const dir = tempDir();
  const handles: CheckDb[] = [];
  t.after(async () => {
    try {
      for (const h of handles) await h.close();
      await dropDatabases();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return {
    dir,
    env: await databaseEnv(dir),
    async check() {
      const db = await openCheckDb(dir);
      handles.push(db);
      return db;
    },
  };
}

/** On PostgreSQL the data dir only holds what the process puts beside the database: never a database file. */
function assertNoSqliteFile(dir: string): void {
  if (ON_POSTGRES) assert.equal(existsSync(join(dir, 'gridkeeper.db')), false, 'the command used GRIDKEEPER_DATABASE_URL, not a file in the data dir');
}

/** The shard tables the backend's own catalogue lists (not telemetry_shards, which the engine keeps). */
async function shardTables(db: CheckDb): Promise<string[]> {
  const rows = db.backend === 'postgres'
    ? await db.all(sql<{ name: string }>`SELECT tablename AS name FROM pg_tables
        WHERE schemaname = current_schema() AND tablename LIKE 'telemetry\\_shard\\_%' ORDER BY tablename`)
    : await db.all(sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'telemetry_shard_[0-9]*' ORDER BY name`);
  return rows.map((r) => r.name).sort();
}

describe('configuration', () => {
  test('defaults match the contract', () => {
    const { config } = parseConfig({}, []);
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.match(config.dataDir, /\/data$/);
    assert.equal(config.adminEmail, 'admin@localhost');
    assert.equal(config.adminPassword, undefined);
    assert.equal(config.trustProxy, false);
    assert.equal(config.log, 'info');
  });

  test('flags win over the environment; --flag=value and --flag value both work', () => {
    const { config, rest } = parseConfig({ GRIDKEEPER_PORT: '9000', GRIDKEEPER_TRUST_PROXY: 'yes' }, ['--port=0', '--host', '0.0.0.0', 'extra']);
    assert.equal(config.port, 0);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.trustProxy, true);
    assert.deepEqual(rest, ['extra']);
  });

  test('a bad value names the setting', () => {
    assert.throws(() => parseConfig({ GRIDKEEPER_PORT: '70000' }, []), (e: Error) => e instanceof ConfigError && /GRIDKEEPER_PORT/.test(e.message) && /65535/.test(e.message));
    assert.throws(() => parseConfig({ GRIDKEEPER_LOG: 'loud' }, []), (e: Error) => e instanceof ConfigError && /GRIDKEEPER_LOG/.test(e.message));
    assert.throws(() => parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: 'short' }, []), (e: Error) => e instanceof ConfigError && /10 characters/.test(e.message));
    assert.throws(() => parseConfig({}, ['--port']), ConfigError);
  });

  test('bad settings and unknown commands exit with code 2 and a message on stderr', async () => {
    const c = capture();
    assert.equal(await runCli(['--port', 'abc'], {}, c.io), 2);
    assert.match(c.err.join('\n'), /--port: expected an integer/);
    const d = capture();
    assert.equal(await runCli(['frobnicate'], {}, d.io), 2);
    assert.match(d.err.join('\n'), /unknown command "frobnicate"/);
  });
});

describe('commands', () => {
  test('version and --help', async () => {
    const c = capture();
    assert.equal(await runCli(['version'], {}, c.io), 0);
    assert.match(c.out[0], /^\d+\.\d+\.\d+$/);
    const h = capture();
    assert.equal(await runCli(['--help'], {}, h.io), 0);
    assert.match(h.out[0], /Usage: gridkeeper/);
    assert.match(h.out[0], /backup <file>/);
  });

  test('migrate creates the schema and is idempotent', async (t) => {
    const { dir, env, check } = await dataDir(t);
    const a = capture();
    assert.equal(await runCli(['migrate', '--data-dir', dir], env, a.io), 0, a.err.join('\n'));
    assert.equal(a.out[0], `applied: ${migrations.map((m) => m.name).join(', ')}`);
    const b = capture();
    assert.equal(await runCli(['migrate', '--data-dir', dir], env, b.io), 0, b.err.join('\n'));
    assert.equal(b.out[0], 'database is up to date');
    assertNoSqliteFile(dir);
    const db = await check();
    if (db.sqlite) assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
    const applied = await db.all(sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY name`);
    assert.deepEqual(applied.map((r) => r.name), migrations.map((m) => m.name).sort());
    assert.ok(applied.length >= 5);
    // the schema is there, empty: migrate creates no user and no root role (the first serve does)
    assert.deepEqual(await db.get(sql`SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM roles) AS roles`), { users: 0, roles: 0 });
  });

  test('user add creates a user once, with a printed password, optionally in a role', async (t) => {
    const { dir, env, check } = await dataDir(t);
    const a = capture();
    assert.equal(await runCli(['user', 'add', 'Ops@Example.com', '--data-dir', dir, '--role', '1'], env, a.io), 2,
      'role 1 does not exist before the first serve');
    assert.match(a.err[0], /role 1 does not exist/);
    const b = capture();
    assert.equal(await runCli(['user', 'add', 'Ops@Example.com', '--data-dir', dir], env, b.io), 0, b.err.join('\n'));
    assert.match(b.out[0], /created user \d+ ops@example\.com/);
    assert.match(b.err[0], /password for ops@example\.com: \S{20} \(shown once\)/);
    const c = capture();
    assert.equal(await runCli(['user', 'add', 'ops@example.com', '--data-dir', dir, '--password', 'long-enough-pw'], env, c.io), 2);
    assert.match(c.err[0], /already exists/);
    assertNoSqliteFile(dir);
    const db = await check();
    const rows = await db.all(sql<{ id: number; email: string; password_hash: string; tier: string }>`SELECT id, email, password_hash, tier FROM users`);
    assert.equal(rows.length, 1, 'the refused commands wrote no user');
    const opsId = rows[0].id;
    assert.equal(opsId, Number(/created user (\d+)/.exec(b.out[0])![1]));
    assert.equal(rows[0].email, 'ops@example.com');
    assert.match(rows[0].password_hash, /^scrypt\$/);
    assert.equal(rows[0].tier, 'basic');
    assert.deepEqual(await db.all(sql`SELECT action, target_id FROM audit_log ORDER BY id`), [{ action: 'user.create', target_id: String(opsId) }]);

    // --role: a member of an existing role, in the same transaction
    const w = await openWritableDb(dir);
    let roleId: number;
    try {
      roleId = (await w.get(sql<{ id: number }>`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
        self_device_management, self_report_management, self_alarm_management, created_at) VALUES ('ops', 0, 0, 0, 0, 0, 0, 0) RETURNING id`))!.id;
    } finally {
      await w.close();
    }
    const d = capture();
    assert.equal(await runCli(['user', 'add', 'member@example.com', '--password', 'long-enough-pw', '--role', String(roleId), '--data-dir', dir], env, d.io), 0, d.err.join('\n'));
    assert.match(d.out[0], new RegExp(`^created user \\d+ member@example\\.com in role ${roleId}$`));
    assert.deepEqual(d.err, [], 'a given password is not printed');
    assert.deepEqual(await db.all(sql`SELECT m.role_id, u.email FROM members m JOIN users u ON u.id = m.user_id`), [{ role_id: roleId, email: 'member@example.com' }]);
    assert.deepEqual((await db.all(sql<{ action: string }>`SELECT action FROM audit_log ORDER BY id`)).map((r) => r.action), ['user.create', 'user.create', 'member.put']);
  });

  test('license create stores the licenses it prints; a taken key or an unknown customer writes nothing', async (t) => {
    const { dir, env, check } = await dataDir(t);
    const a = capture();
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '365', '--solar-kw', '10', '--count', '3', '--data-dir', dir], env, a.io), 0, a.err.join('\n'));
    assert.equal(a.out.length, 3);
    assert.deepEqual(a.err, []);
    const b = capture();
    assert.equal(await runCli(['license', 'create', '--type=commercial', '--duration=30', '--grid-kw', '1', '--key', 'CLI-KEY-1', '--data-dir', dir], env, b.io), 0, b.err.join('\n'));
    assert.deepEqual(b.out, ['CLI-KEY-1']);
    const taken = capture();
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '1', '--key', 'CLI-KEY-1', '--data-dir', dir], env, taken.io), 2);
    assert.deepEqual(taken.err, ['gridkeeper: license create: a license with this key already exists']);
    const customer = '00000000-0000-4000-8000-000000000000';
    const orphan = capture();
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '1', '--key', 'CLI-KEY-2', '--customer', customer, '--data-dir', dir], env, orphan.io), 2);
    assert.deepEqual(orphan.err, [`gridkeeper: license create: no customer with id ${customer}`]);
    assertNoSqliteFile(dir);
    const db = await check();
    const rows = (await db.all(sql<{ key: string; type: string; duration: number; grid_kw: number | null; solar_kw: number | null; activation_date: number | null }>`
      SELECT key, type, duration, grid_kw, solar_kw, activation_date FROM licenses`)).sort((x, y) => (x.key < y.key ? -1 : 1));
    assert.deepEqual(rows, [
      ...[...a.out].sort().map((key) => ({ key, type: 'residential', duration: 365, grid_kw: null, solar_kw: 10, activation_date: null })),
      { key: 'CLI-KEY-1', type: 'commercial', duration: 30, grid_kw: 1, solar_kw: null, activation_date: null },
    ].sort((x, y) => (x.key < y.key ? -1 : 1)), 'the refused runs (taken key, unknown customer) stored nothing');
    assert.deepEqual(await db.get(sql`SELECT count(*) AS n FROM audit_log WHERE action = 'license.create'`), { n: 4 });
  });

  test('keys rotate adds a signing key that signs from now on and retires the previous ones (kept: they still verify)', async (t) => {
    const { dir, env, check } = await dataDir(t);
    const kids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const out = capture();
      assert.equal(await runCli(['keys', 'rotate', '--data-dir', dir], env, out.io), 0, out.err.join('\n'));
      const m = /^new signing key (\S+): running nodes sign with it within 5 s; tokens signed by the previous keys stay valid until they expire$/.exec(out.out[0]);
      assert.ok(m, out.out[0]);
      kids.push(m[1]);
    }
    const db = await check();
    const rows = await db.all(sql<{ kid: string; active: number }>`SELECT kid, CASE WHEN retired_at IS NULL THEN 1 ELSE 0 END AS active FROM signing_keys ORDER BY created_at, kid`);
    assert.deepEqual(rows.map((r) => [r.kid, Number(r.active)]), [[kids[0], 0], [kids[1], 1]]);
    const bad = capture();
    assert.equal(await runCli(['keys', 'rotate', '--now', '--data-dir', dir], env, bad.io), 2);
    assert.match(bad.err[0], /keys rotate: unknown/);
  });

  test('telemetry prune drops the shard tables older than the duration', async (t) => {
    const { dir, env, check } = await dataDir(t);
    assert.equal(await runCli(['migrate', '--data-dir', dir], env, capture().io), 0);
    // telemetry of one node at 100, 95, 89 and 1 days ago: four daily shards
    const now = Date.now();
    const ages = [100, 95, 89, 1];
    const w: Db = await openWritableDb(dir);
    try {
      const id = async (query: RawBuilder<{ id: number }>) => (await w.get(query))!.id;
      const userId = await id(sql`INSERT INTO users (email, password_hash, password_changed_at, created_at) VALUES ('prune@test', 'x', 0, 0) RETURNING id`);
      const roleId = await id(sql`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
        self_device_management, self_report_management, self_alarm_management, created_at) VALUES ('r', 0, 0, 0, 0, 0, 0, 0) RETURNING id`);
      await w.run(sql`INSERT INTO members (role_id, user_id) VALUES (${roleId}, ${userId})`);
      const deviceId = await id(sql`INSERT INTO devices (properties, last_update, created_at) VALUES (${JSON.stringify({ nodeId: 'n1' })}, 0, 0) RETURNING id`);
      await w.run(sql`INSERT INTO monitors (role_id, device_id, monitor_management) VALUES (${roleId}, ${deviceId}, 1)`);
      const body = ages.map((d) => `power,nodeId=n1 p=${d} ${now - d * DAY}`).join('\n');
      assert.equal(await writeLineProtocol(w, { userId, namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' }, body: [body], precision: 'ms', now }), 4);
    } finally {
      await w.close();
    }
    const db = await check();
    const shards = async () => db.all(sql<{ namespace_id: number; shard_window: number; table_name: string }>`
      SELECT namespace_id, shard_window, table_name FROM telemetry_shards ORDER BY shard_window`);
    const before = await shards();
    const windows = ages.map((d) => Math.floor((now - d * DAY) / DAY));
    assert.deepEqual(before.map((s) => s.shard_window), windows);
    for (const s of before) assert.equal(s.table_name, shardTableName(s.namespace_id, s.shard_window));
    assert.deepEqual(await shardTables(db), before.map((s) => s.table_name).sort());

    const io = capture();
    assert.equal(await runCli(['telemetry', 'prune', '--older-than', '90d', '--data-dir', dir], env, io.io), 0, io.err.join('\n'));
    assert.match(io.out[0], /^dropped 2 shard tables with data older than \d{4}-/);
    let left = await shards();
    assert.deepEqual(left.map((s) => s.shard_window), windows.slice(2));
    assert.deepEqual(await shardTables(db), left.map((s) => s.table_name).sort(), 'the tables went with their catalogue rows');
    // the retention setting is the default duration
    assert.equal(await runCli(['telemetry', 'prune', '--data-dir', dir], { ...env, GRIDKEEPER_TELEMETRY_RETENTION: '60d' }, io.io), 0, io.err.join('\n'));
    assert.match(io.out[1], /^dropped 1 shard table with data older than/);
    left = await shards();
    assert.deepEqual(left.map((s) => s.shard_window), windows.slice(3));
    assert.deepEqual(await shardTables(db), [left[0].table_name]);
    if (db.backend === 'postgres') {
      // the points may still be staged (src/telemetry/pg/pg-staging.ts): folded as a read would first
      const writable = await openWritableDb(dir);
      try { await settleReads(writable); } finally { await writable.close(); }
    }
    assert.deepEqual(await db.get(sql`SELECT count(*) AS n FROM ${sql.table(left[0].table_name)}`), { n: 1 }, 'the newest point is kept');
    // nothing to prune: no duration, or a bad one, exits 2
    assert.equal(await runCli(['telemetry', 'prune', '--data-dir', dir], env, io.io), 2);
    assert.match(io.err.at(-1)!, /give --older-than/);
    assert.equal(await runCli(['telemetry', 'prune', '--older-than', 'soon', '--data-dir', dir], env, io.io), 2);
    assert.match(io.err.at(-1)!, /--older-than: expected a duration/);
    assert.equal((await shards()).length, 1);
    assertNoSqliteFile(dir);
  });

  test('backup writes a consistent copy of the SQLite file (VACUUM INTO) and refuses to overwrite', { skip: ON_POSTGRES && 'a copy of the SQLite file: PostgreSQL has its own backup test (pg_dump)' }, async (t) => {
    const { dir, env } = await dataDir(t);
    await runCli(['user', 'add', 'a@b', '--data-dir', dir, '--password', 'long-enough-pw'], env, capture().io);
    const dest = join(dir, 'copies', 'backup.db');
    const a = capture();
    assert.equal(await runCli(['backup', dest, '--data-dir', dir], env, a.io), 0);
    assert.equal(a.out[0], `backup written to ${dest}`);
    assert.ok(existsSync(dest));
    const copy = new Database(dest, { readonly: true });
    t.after(() => copy.close());
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
    assert.equal(copy.prepare('SELECT email FROM users').pluck().get(), 'a@b');
    const b = capture();
    assert.equal(await runCli(['backup', dest, '--data-dir', dir], env, b.io), 2);
    assert.match(b.err[0], /already exists/);
  });

  test('backup on PostgreSQL runs pg_dump (custom format, restorable with pg_restore), refuses to overwrite, and says so when pg_dump is missing', { skip: !ON_POSTGRES && 'pg_dump of the PostgreSQL database: SQLite has its own backup test' }, async (t) => {
    const { dir, env } = await dataDir(t);
    assert.equal(await runCli(['user', 'add', 'a@b', '--data-dir', dir, '--password', 'long-enough-pw'], env, capture().io), 0);
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '1', '--key', 'BACKED-UP', '--data-dir', dir], env, capture().io), 0);
    const dest = join(dir, 'copies', 'backup.dump');
    const a = capture();
    assert.equal(await runCli(['backup', dest, '--data-dir', dir], env, a.io), 0, a.err.join('\n'));
    assert.deepEqual(a.out, [`backup written to ${dest} (pg_dump custom format: restore with pg_restore)`]);
    assert.deepEqual(readdirSync(join(dir, 'copies')), ['backup.dump'], 'no partial file left beside it');
    const restored = await openBackup(dest);
    t.after(() => restored.drop());
    assert.deepEqual(await restored.db.all(sql`SELECT email FROM users`), [{ email: 'a@b' }]);
    assert.deepEqual(await restored.db.all(sql`SELECT key FROM licenses`), [{ key: 'BACKED-UP' }]);
    const applied = await restored.db.all(sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY name`);
    assert.deepEqual(applied.map((r) => r.name), migrations.map((m) => m.name).sort());
    const b = capture();
    assert.equal(await runCli(['backup', dest, '--data-dir', dir], env, b.io), 2);
    assert.match(b.err[0], /already exists/);
    assertNoSqliteFile(dir);

    // The built executable with a PATH that holds no pg_dump: exit 2 with the message, nothing written.
    assert.ok(existsSync(BINARY), `${BINARY} is missing: run "node build.mjs" first`);
    const other = join(dir, 'copies', 'other.dump');
    const run = spawnSync(BINARY, ['backup', other, '--data-dir', dir], { encoding: 'utf8', env: { PATH: join(dir, 'no-tools'), ...env }, timeout: 30_000 });
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^gridkeeper: backup: on PostgreSQL \(GRIDKEEPER_DATABASE_URL\) the backup tool is pg_dump, which is not installed here; /);
    assert.deepEqual(readdirSync(join(dir, 'copies')), ['backup.dump'], 'nothing half-written');

    // A pg_dump that raced a table drop (a shard pruned between its listing and its locks) is run again: a stand-in that
    // fails that way twice, then runs the real one; and one that always fails that way ends in exit 2, nothing written.
    const real = spawnSync('sh', ['-c', 'command -v pg_dump'], { encoding: 'utf8' }).stdout.trim();
    const tools = join(dir, 'racing-tools');
    mkdirSync(tools);
    const calls = join(tools, 'calls');
    writeFileSync(join(tools, 'pg_dump'), `#!/bin/sh\necho x >> '${calls}'\n`
      + `if [ "$(wc -l < '${calls}')" -le "$RACES" ]; then echo 'pg_dump: error: query failed: ERROR:  relation "public.telemetry_shard_1_1" does not exist' >&2; exit 1; fi\n`
      + `exec '${real}' "$@"\n`);
    chmodSync(join(tools, 'pg_dump'), 0o755);
    const racing = (races: number, file: string) => {
      rmSync(calls, { force: true });
      return spawnSync(BINARY, ['backup', join(dir, 'copies', file), '--data-dir', dir], { encoding: 'utf8', env: { PATH: `${tools}:/usr/bin:/bin`, RACES: String(races), ...env }, timeout: 30_000 });
    };
    const retried = racing(2, 'retried.dump');
    assert.equal(retried.status, 0, retried.stderr);
    assert.equal(readFileSync(calls, 'utf8').split('\n').filter(Boolean).length, 3, 'two failed runs, then the one that wrote');
    const again = await openBackup(join(dir, 'copies', 'retried.dump'));
    t.after(() => again.drop());
    assert.deepEqual(await again.db.all(sql`SELECT key FROM licenses`), [{ key: 'BACKED-UP' }]);
    const hopeless = racing(100, 'hopeless.dump');
    assert.equal(hopeless.status, 2);
    assert.match(hopeless.stderr, /^gridkeeper: backup: pg_dump failed: pg_dump: error: query failed: ERROR: {2}relation "public.telemetry_shard_1_1" does not exist/);
    assert.equal(readFileSync(calls, 'utf8').split('\n').filter(Boolean).length, 6, 'the first run and five more, no more');
    assert.deepEqual(readdirSync(join(dir, 'copies')).sort(), ['backup.dump', 'retried.dump'], 'nothing half-written');
  });
});
