// The Debian package, made from dist/gridkeeper (npm run build:release makes the released ones the same way, xz
// compressed; here gzip -1, which only dpkg-deb's time and the size tell apart): lintian, then installed with dpkg into a
// throw-away Debian root made by debootstrap, the unit checked by systemd-analyze, its ExecStart run by hand as the
// package's user, an upgrade that keeps the data, the settings and the admin's password, removal, and purge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BINARY, startBinary } from '../support/binary.ts';
import { debianRoot, type DebianRoot } from '../support/debian-root.ts';
import { buildDeb } from '../../src/packaging/deb.mjs';
import { packageVersion } from '../../src/build/release.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADDON = join(ROOT, 'dist/better_sqlite3.node');
const VERSION = packageVersion(ROOT);
const PREVIOUS = `${VERSION}~previous1`;
const DATA = '/var/lib/gridkeeper';
const ENV_FILE = '/etc/gridkeeper/gridkeeper.env';
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The [Service] settings of a unit, by name (the last of a repeated name). */
function unitSettings(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^(\w+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
}

/** An EnvironmentFile as systemd reads it: NAME=value lines; comments and blank lines skipped. */
function environmentFile(text: string): Record<string, string> {
  return Object.fromEntries(text.split('\n').filter((l) => /^\s*[A-Z_][A-Z0-9_]*=/.test(l)).map((l) => {
    const at = l.indexOf('=');
    return [l.slice(0, at).trim(), l.slice(at + 1).trim()];
  }));
}

/** The unit's Environment= assignments (NAME=value, separated by spaces; none of ours is quoted). */
function unitEnvironment(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^Environment=(.*)$/gm)].flatMap((m) => m[1].trim().split(/\s+/)).map((kv) => {
    const at = kv.indexOf('=');
    return [kv.slice(0, at), kv.slice(at + 1)];
  }));
}

/**
 * Starts the unit's ExecStart inside the root as systemd would: its Environment=, overridden by the environment file
 * read as root, then as User/Group.
 */
async function startUnit(root: DebianRoot) {
  const text = readFileSync(join(root.dir, 'lib/systemd/system/gridkeeper.service'), 'utf8');
  const unit = unitSettings(text);
  const env = { ...unitEnvironment(text), ...environmentFile(readFileSync(join(root.dir, unit.EnvironmentFile), 'utf8')) };
  const [exe, ...args] = unit.ExecStart.split(/\s+/);
  return startBinary('chroot', [root.dir, 'setpriv', `--reuid=${unit.User}`, `--regid=${unit.Group}`, '--init-groups',
    '--no-new-privs', '--bounding-set=-all', '--inh-caps=-all', exe, ...args], { ...env, PATH }, undefined, 30_000);
}

/** lintian on `deb`, every tag (pedantic and informational ones too) failing it. */
function lintian(deb: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('lintian', ['--pedantic', '--display-info', '--fail-on', 'error,warning,info,pedantic', deb], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c; });
    child.stderr.on('data', (c: Buffer) => { output += c; });
    child.on('close', (status) => resolve({ status, output: output.replace(/^running with root privileges is not recommended!\n/m, '') }));
  });
}

async function call(url: string, method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function accessToken(url: string, password: string): Promise<string> {
  const login = await call(url, 'POST', '/auth/login', undefined, { username: 'admin@localhost', password });
  assert.equal(login.status, 200, login.text);
  const access = await call(url, 'GET', '/auth/accesstoken', login.text);
  assert.equal(access.status, 200, access.text);
  return access.text;
}

test('the .deb: lintian, install, systemd-analyze, ExecStart as its user, upgrade keeping data and password, remove, purge', { timeout: 600_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'gk-deb-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const previous = buildDeb({ exe: BINARY, addon: ADDON, arch: 'amd64', version: PREVIOUS, outDir: join(out, 'previous'), compression: 'gzip', level: 1 });
  const current = buildDeb({ exe: BINARY, addon: ADDON, arch: 'amd64', version: VERSION, outDir: out, compression: 'gzip', level: 1 });

  // lintian (~25 s of CPU on the 90 MB executable) runs while the package is installed and run below
  const lint = lintian(current);

  const root = debianRoot();
  t.after(() => root.remove());
  const dpkg = (...args: string[]) => root.run(['dpkg', ...args], { env: { PATH, DEBIAN_FRONTEND: 'noninteractive' } });
  for (const deb of [previous, current]) execFileSync('cp', [deb, join(root.dir, 'tmp')]);
  const inRoot = (deb: string) => `/tmp/${deb.split('/').at(-1)}`;

  // first install: the user, the data dir (0750, the user's), the conffile (root's alone), the unit enabled
  const installed = dpkg('-i', inRoot(previous));
  assert.match(installed, /admin password is written to \/var\/lib\/gridkeeper\/admin-password/);
  const [, uid, gid, , home, shell] = root.run(['getent', 'passwd', 'gridkeeper']).trim().split(':').slice(1);
  assert.ok(Number(uid) < 1000, `a system user (uid ${uid})`);
  assert.deepEqual([home, shell], [DATA, '/usr/sbin/nologin']);
  const dataStat = statSync(join(root.dir, DATA));
  assert.deepEqual([dataStat.mode & 0o7777, dataStat.uid, dataStat.gid], [0o750, Number(uid), Number(gid)]);
  const envStat = statSync(join(root.dir, ENV_FILE));
  assert.deepEqual([envStat.mode & 0o7777, envStat.uid], [0o600, 0]);
  assert.equal(root.run(['dpkg-query', '-W', '-f=${Conffiles}', 'gridkeeper']).trim().split(' ')[0], ENV_FILE);
  assert.equal(readlinkSync(join(root.dir, 'etc/systemd/system/multi-user.target.wants/gridkeeper.service')),
    '/lib/systemd/system/gridkeeper.service', 'enabled');

  // the unit as the root's systemd reads it
  const verify = spawnSync('chroot', [root.dir, 'systemd-analyze', 'verify', '/lib/systemd/system/gridkeeper.service'], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stderr);
  assert.equal(verify.stderr.trim(), '', 'systemd-analyze verify has something to say');

  // the admin's edit of the settings: a port of its own (0: any free one) — kept by the upgrade below
  const settings = readFileSync(join(root.dir, ENV_FILE), 'utf8').replace(/^GRIDKEEPER_PORT=.*$/m, 'GRIDKEEPER_PORT=0');
  writeFileSync(join(root.dir, ENV_FILE), settings);

  // ExecStart by hand as the package's user: first start, the password in a file of the user's, gone at first login
  const first = await startUnit(root);
  t.after(() => first.stop('SIGKILL'));
  assert.equal((await call(first.url, 'GET', '/healthz')).status, 200);
  // the unit's allocator settings reach the service (chroot and setpriv exec it: the child's pid is the service's)
  const environ = readFileSync(`/proc/${first.child.pid}/environ`, 'utf8').split('\0');
  for (const kv of ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072', 'MALLOC_TRIM_THRESHOLD_=2097152']) assert.ok(environ.includes(kv), kv);
  const passwordFile = join(root.dir, DATA, 'admin-password');
  const fileStat = statSync(passwordFile);
  assert.deepEqual([fileStat.mode & 0o777, fileStat.uid], [0o600, Number(uid)]);
  const password = readFileSync(passwordFile, 'utf8').trim();
  assert.ok(!(first.stdout.join('') + first.stderr.join('')).includes(password), 'the password is not in the log');
  const token = await accessToken(first.url, password);
  assert.equal(existsSync(passwordFile), false, 'removed at the first login');
  const created = await call(first.url, 'POST', '/v1/device?roleId=1', token, { properties: { nodeId: 'kept-1' } });
  assert.equal(created.status, 200, created.text);
  assert.equal(await first.stop('SIGTERM'), 0);
  for (const f of ['gridkeeper.db', 'secret.key']) assert.equal(statSync(join(root.dir, DATA, f)).uid, Number(uid), `${f} is the user's`);

  // upgrade: data, settings and password kept
  const upgraded = dpkg('-i', inRoot(current));
  assert.doesNotMatch(upgraded, /admin password/);
  assert.equal(root.run(['dpkg-query', '-W', '-f=${Version}', 'gridkeeper']), VERSION);
  assert.equal(readFileSync(join(root.dir, ENV_FILE), 'utf8'), settings, 'the edited settings are kept');
  const after = statSync(join(root.dir, DATA));
  assert.deepEqual([after.mode & 0o7777, after.uid], [0o750, Number(uid)]);
  const second = await startUnit(root);
  t.after(() => second.stop('SIGKILL'));
  const again = await accessToken(second.url, password);
  const found = await call(second.url, 'POST', '/v1/device/query', again, { filter: { nodeId: ['kept-1'] } });
  assert.equal(found.status, 200, found.text);
  assert.match(found.text, /"kept-1"/);
  assert.equal(await second.stop('SIGTERM'), 0);

  // remove keeps the data and the settings, and says how to delete them; purge deletes them, saying so first
  const removed = dpkg('-r', 'gridkeeper');
  assert.match(removed, /data in \/var\/lib\/gridkeeper is kept/);
  assert.equal(existsSync(join(root.dir, 'usr/bin/gridkeeper')), false);
  assert.ok(existsSync(join(root.dir, DATA, 'gridkeeper.db')));
  assert.ok(existsSync(join(root.dir, ENV_FILE)));
  const purged = dpkg('-P', 'gridkeeper');
  assert.match(purged, /purge: deleting \/var\/lib\/gridkeeper/);
  assert.equal(existsSync(join(root.dir, DATA)), false);
  assert.equal(existsSync(join(root.dir, ENV_FILE)), false);

  // lintian: nothing but the tags explained in src/packaging/lintian-overrides, pedantic ones included
  const { status, output } = await lint;
  assert.equal(output, '', 'lintian has something to say');
  assert.equal(status, 0);
});
