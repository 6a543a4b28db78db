// Command arguments are read one way (util.parseArgs through parseFlags): a flag without its value, an unknown flag, a
// flag given twice or a stray argument stops the command with exit code 2 and nothing written. A command given a data
// dir runs on the backend under test (on PostgreSQL with GRIDKEEPER_DATABASE_URL of a fresh empty database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { runCli } from '../../src/boot/cli.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { verifySecret } from '../../src/auth/passwords.ts';
import { BACKEND, databaseEnv, dropDatabases, openCheckDb } from '../support/harness.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

test('user add --password without its value: exit 2, no user, no generated password', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-args-'));
  t.after(async () => {
    try { await dropDatabases(); } finally { rmSync(dir, { recursive: true, force: true }); }
  });
  // on PostgreSQL the data dir's database is a fresh EMPTY one: a command that opened it would have migrated it
  const env = await databaseEnv(dir);
  for (const args of [
    ['user', 'add', 'a@example.com', '--data-dir', dir, '--password'],
    ['user', 'add', 'a@example.com', '--password', '--role', '1', '--data-dir', dir],
  ]) {
    const run = capture();
    assert.equal(await runCli(args, env, run.io), 2, args.join(' '));
    assert.match(run.err[0], /user add: --password needs a value/);
    assert.equal(run.err.some((l) => /shown once/.test(l)), false);
  }
  assert.equal(existsSync(join(dir, 'gridkeeper.db')), false, 'refused before the database was opened');
  if (BACKEND === 'postgres') {
    const empty = await openCheckDb(dir);
    try {
      const tables = await empty.all(sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`);
      assert.deepEqual(tables, [], 'refused before the database was opened: not even migrated');
    } finally {
      await empty.close();
    }
  }
  const inline = capture();
  assert.equal(await runCli(['user', 'add', 'a@example.com', '--data-dir', dir, '--password=--starts-with-dashes'], env, inline.io), 0, inline.err.join('\n'));
  assert.match(inline.out[0], /created user \d+ a@example\.com/);
  const check = await openCheckDb(dir);
  try {
    const user = await check.get(sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE email = ${'a@example.com'}`);
    assert.ok(user && await verifySecret('--starts-with-dashes', user.password_hash), 'the inline value is the password');
  } finally {
    await check.close();
  }
});

test('unknown flags, repeated flags and stray arguments are refused by every command', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['user', 'add', 'a@example.com', '--colour', 'red'], /user add: unknown argument --colour/],
    [['user', 'add', 'a@example.com', 'b@example.com'], /user add: unknown argument b@example\.com/],
    [['user', 'add', 'a@example.com', '--role', '2', '--role', '3'], /user add: --role given twice/],
    [['telemetry', 'prune', '--older-than'], /telemetry prune: --older-than needs a value/],
    [['telemetry', 'prune', '--older-than', '1d', '--older-than', '2d'], /telemetry prune: --older-than given twice/],
    [['license', 'create', '--type', 'residential', '--duration', '--count', '2'], /license create: --duration needs a value/],
  ];
  for (const [args, message] of cases) {
    const run = capture();
    assert.equal(await runCli(args, {}, run.io), 2, args.join(' '));
    assert.match(run.err[0], message);
  }
});

test('settings flags: --flag value, --flag=value, --trust-proxy alone; a missing value is refused', () => {
  const { config, rest } = parseConfig({}, ['--port', '9000', 'x', '--log=debug', '--trust-proxy', '--password', 'p']);
  assert.equal(config.port, 9000);
  assert.equal(config.log, 'debug');
  assert.equal(config.trustProxy, true);
  assert.deepEqual(rest, ['x', '--password', 'p']);
  assert.throws(() => parseConfig({}, ['--port']), /--port: a value is required/);
  assert.throws(() => parseConfig({}, ['--port', '--log', 'info']), /--port: a value is required/);
  assert.equal(parseConfig({}, ['--trust-proxy=false']).config.trustProxy, false);
});
