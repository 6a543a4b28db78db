// The single executable, alone in an empty directory: starts on port 0, serves, keeps its data across restarts,
// backs up while running, and stops gracefully on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, startBinary } from '../support/binary.ts';

test('dist/gridkeeper runs with no file beside it and no node_modules above it', async (t) => {
  const { dir, exe } = isolatedBinary();
  try {
    assert.deepEqual(readdirSync(dir), ['gridkeeper']);
    assert.equal(execFileSync(exe, ['version'], { encoding: 'utf8' }).trim(), '0.1.0');
    const data = join(dir, 'data');
    const run = await startBinary(exe, ['--data-dir', data], { GRIDKEEPER_ADMIN_PASSWORD: 'binary-test-password' });
    t.after(() => run.stop('SIGKILL')); // a no-op once the graceful stop below has run
    assert.match(run.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${run.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok', version: '0.1.0', backend: 'sqlite', database: 'reachable' });
    const missing = await fetch(`${run.url}/v1/nothing`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, 'NOT_FOUND');
    // the admin password was given: nothing is printed about it
    assert.doesNotMatch(run.stderr.join(''), /password/);

    // backup while the server runs
    execFileSync(exe, ['backup', join(dir, 'copy.db'), '--data-dir', data]);
    assert.ok(existsSync(join(dir, 'copy.db')));

    assert.equal(await run.stop('SIGTERM'), 0, 'graceful stop exits 0');
    assert.ok(run.stdout.some((l) => l.includes('"msg":"stopping"')));

    // a restart on the same data dir does not bootstrap again, and the signing keys survive
    const again = await startBinary(exe, ['--data-dir', data]);
    t.after(() => again.stop('SIGKILL'));
    assert.doesNotMatch(again.stderr.join(''), /created admin user/);
    assert.equal((await fetch(`${again.url}/healthz`)).status, 200);
    assert.equal(await again.stop('SIGINT'), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('first start without an admin password prints a generated one once, on stderr', async (t) => {
  const { dir, exe } = isolatedBinary();
  try {
    const run = await startBinary(exe, ['--data-dir', join(dir, 'data')]);
    t.after(() => run.stop('SIGKILL')); // a no-op once the graceful stop below has run
    await new Promise((r) => setTimeout(r, 50));
    const said = run.stderr.join('');
    assert.match(said, /created admin user admin@localhost with password \S{20}/);
    assert.equal(await run.stop(), 0);
    const second = await startBinary(exe, ['--data-dir', join(dir, 'data')]);
    t.after(() => second.stop('SIGKILL'));
    assert.doesNotMatch(second.stderr.join(''), /password/);
    assert.equal(await second.stop(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('first start with GRIDKEEPER_ADMIN_PASSWORD_FILE writes the generated password there (0600), never to stderr', async (t) => {
  const { dir, exe } = isolatedBinary();
  try {
    const file = join(dir, 'data', 'admin-password');
    const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD_FILE: file });
    t.after(() => run.stop('SIGKILL'));
    const password = readFileSync(file, 'utf8').trim();
    assert.match(password, /^\S{20}$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const said = run.stderr.join('') + run.stdout.join('');
    assert.ok(!said.includes(password), 'the password is in no output');
    assert.match(said, new RegExp(`created admin user admin@localhost; its password is in ${file}`));
    const login = await fetch(`${run.url}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin@localhost', password }),
    });
    assert.equal(login.status, 200);
    assert.equal(existsSync(file), false, 'removed at the first login');
    assert.equal(await run.stop(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad setting exits with code 2 and says which', () => {
  const { dir, exe } = isolatedBinary();
  try {
    let status = 0;
    let stderr = '';
    try {
      execFileSync(exe, ['--port', 'eighty'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = String((err as { stderr: string }).stderr);
    }
    assert.equal(status, 2);
    assert.match(stderr, /--port: expected an integer from 0 to 65535/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
