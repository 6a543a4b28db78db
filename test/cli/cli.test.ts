// The command line: settings parsing (exit 2 on a bad value), migrate, user add, backup, version, help.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../../src/cli.ts';
import { parseConfig, ConfigError } from '../../src/config.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'gk-cli-'));
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
    const dir = tempDir();
    try {
      const a = capture();
      assert.equal(await runCli(['migrate', '--data-dir', dir], {}, a.io), 0);
      assert.match(a.out[0], /applied: 0001_core/);
      const b = capture();
      assert.equal(await runCli(['migrate', '--data-dir', dir], {}, b.io), 0);
      assert.equal(b.out[0], 'database is up to date');
      const db = new Database(join(dir, 'gridkeeper.db'), { readonly: true });
      t.after(() => db.close());
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.ok((db.prepare('SELECT count(*) FROM schema_migrations').pluck().get() as number) >= 5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('user add creates a user once, with a printed password, optionally in a role', async (t) => {
    const dir = tempDir();
    try {
      const a = capture();
      assert.equal(await runCli(['user', 'add', 'Ops@Example.com', '--data-dir', dir, '--role', '1'], {}, a.io), 2,
        'role 1 does not exist before the first serve');
      assert.match(a.err[0], /role 1 does not exist/);
      const b = capture();
      assert.equal(await runCli(['user', 'add', 'Ops@Example.com', '--data-dir', dir], {}, b.io), 0);
      assert.match(b.out[0], /created user \d+ ops@example\.com/);
      assert.match(b.err[0], /password for ops@example\.com: \S{20} \(shown once\)/);
      const c = capture();
      assert.equal(await runCli(['user', 'add', 'ops@example.com', '--data-dir', dir, '--password', 'long-enough-pw'], {}, c.io), 2);
      assert.match(c.err[0], /already exists/);
      const db = new Database(join(dir, 'gridkeeper.db'), { readonly: true });
      t.after(() => db.close());
      const row = db.prepare('SELECT email, password_hash, tier FROM users').get() as { email: string; password_hash: string; tier: string };
      assert.equal(row.email, 'ops@example.com');
      assert.match(row.password_hash, /^scrypt\$/);
      assert.equal(row.tier, 'basic');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('backup writes a consistent copy and refuses to overwrite', async (t) => {
    const dir = tempDir();
    try {
      await runCli(['user', 'add', 'a@b', '--data-dir', dir, '--password', 'long-enough-pw'], {}, capture().io);
      const dest = join(dir, 'copies', 'backup.db');
      const a = capture();
      assert.equal(await runCli(['backup', dest, '--data-dir', dir], {}, a.io), 0);
      assert.ok(existsSync(dest));
      const copy = new Database(dest, { readonly: true });
      t.after(() => copy.close());
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(copy.prepare('SELECT email FROM users').pluck().get(), 'a@b');
      const b = capture();
      assert.equal(await runCli(['backup', dest, '--data-dir', dir], {}, b.io), 2);
      assert.match(b.err[0], /already exists/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
