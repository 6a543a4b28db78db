// The single executable, alone in an empty directory: starts on port 0, serves, keeps its data across restarts,
// backs up while running, and stops gracefully on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, startBinary, type RunningBinary } from '../support/binary.ts';

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

/** glibc's arenas other than the main one: anonymous read-write mappings at a 64 MB boundary whose reservation is 64 MB. */
function glibcArenas(pid: number): number {
  const ARENA = 64 * 1024 * 1024;
  const rows = readFileSync(`/proc/${pid}/maps`, 'utf8').trim().split('\n').map((line) => {
    const [range, perms, , , , name] = line.split(/\s+/);
    const [start, end] = range.split('-').map((hex) => parseInt(hex, 16));
    return { start, end, perms, anonymous: !name };
  });
  return rows.filter((r, i) => {
    if (!r.anonymous || r.perms !== 'rw-p' || r.start % ARENA !== 0) return false;
    const next = rows[i + 1];
    const end = next?.start === r.end && next.perms === '---p' && next.anonymous ? next.end : r.end;
    return end - r.start === ARENA;
  }).length;
}

test('the executable sets glibc\'s allocator itself, before its threads take arenas; the environment\'s settings win', async (t) => {
  const { dir, exe } = isolatedBinary();
  try {
    const login = (url: string) => fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin@localhost', password: 'allocator-test-password' }) });
    const allocatorLine = (run: RunningBinary) => JSON.parse(run.stdout.find((l) => l.includes('"msg":"allocator"')) ?? 'null');
    const start = async (env: Record<string, string>) => {
      const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: 'allocator-test-password', ...env });
      t.after(() => run.stop('SIGKILL'));
      // password hashes on the thread pool: each of its threads allocates
      const answers = await Promise.all([login(run.url), login(run.url), login(run.url)]);
      assert.deepEqual(answers.map((r) => r.status), [200, 200, 200]);
      return run;
    };

    const tuned = await start({ GRIDKEEPER_LOG: 'debug' });
    const line = allocatorLine(tuned);
    assert.deepEqual([line?.set, line?.fromEnvironment], [{ MALLOC_ARENA_MAX: 2, MALLOC_MMAP_THRESHOLD_: 131072, MALLOC_TRIM_THRESHOLD_: 2097152 }, []]);
    assert.ok(glibcArenas(tuned.child.pid!) <= 1, `arenas besides the main one: ${glibcArenas(tuned.child.pid!)}`);
    // the logins' work done, the process goes idle: the arenas' free pages are given back once, within a few seconds
    const trims = () => tuned.stdout.filter((l) => l.includes('"msg":"allocator trimmed"')).map((l) => JSON.parse(l));
    for (let waited = 0; trims().length === 0 && waited < 10_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    assert.equal(trims().length, 1, 'one trim after the work');
    assert.ok(trims()[0].rssAfterMb <= trims()[0].rssBeforeMb, JSON.stringify(trims()[0]));
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(trims().length, 1, 'no trim again while idle');
    assert.equal(await tuned.stop(), 0);

    const given = await start({ MALLOC_ARENA_MAX: '8', GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=262144' });
    assert.deepEqual(allocatorLine(given).set, { MALLOC_MMAP_THRESHOLD_: 131072 });
    assert.deepEqual(allocatorLine(given).fromEnvironment, ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_']);
    assert.ok(glibcArenas(given.child.pid!) > 1, `with MALLOC_ARENA_MAX=8 each thread takes an arena of its own: ${glibcArenas(given.child.pid!)}`);
    assert.equal(await given.stop(), 0);

    // a command other than serve does not tune: it writes no addon, and makes no data dir (./data by default)
    const elsewhere = mkdtempSync(join(dir, 'cwd-'));
    assert.equal(execFileSync(exe, ['version'], { cwd: elsewhere, encoding: 'utf8' }).trim(), '0.1.0');
    assert.deepEqual(readdirSync(elsewhere), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
