// TOTP secrets are sealed at rest (AES-256-GCM) under a key kept outside the database: the database file alone gives
// no second factor away; clear secrets of an older database are sealed at start; `secrets rotate` moves every secret
// to a new key, and the server keeps verifying codes across it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { generateSync } from 'otplib';
import { runCli } from '../../src/boot/cli.ts';
import { KEY_FILE, createSecretBox, parseSecretKeys } from '../../src/lib/secret-box.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.ts';
import { restartableApp } from '../support/auth-helpers.ts';

const quiet = { out: () => {}, err: () => {} };

async function login2fa(app: Awaited<ReturnType<ReturnType<typeof restartableApp>['start']>>, secret: string, epochS: number) {
  const first = await app.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  assert.equal(first.status, 401, first.text);
  return app.request('POST', '/user/2fa/totp/authenticate', { token: first.body.partialAuthToken, body: { totp: generateSync({ secret, epoch: epochS }) } });
}

test('sealed at rest, sealed at start when found in clear, rotated by the command while codes keep working', async (t) => {
  const world = restartableApp();
  t.after(() => world.cleanup());
  let app = await world.start();
  const refresh = (await app.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).text;
  const access = (await app.request('GET', '/auth/accesstoken', { token: refresh })).text;
  const setup = await app.request('POST', '/user/2fa/totp/setup', { token: access });
  const secret: string = setup.body.secret;
  const epoch = () => Math.floor(world.clock.now() / 1000);
  assert.equal((await app.request('POST', '/user/2fa/totp/enable', { token: access, body: { totp: generateSync({ secret, epoch: epoch() }) } })).status, 200);
  await app.stop();

  const dir = world.dir;
  const keyFile = join(dir, KEY_FILE);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600, 'the key file is readable by its owner only');
  const [key] = parseSecretKeys(readFileSync(keyFile, 'utf8'), keyFile);
  const stored = () => {
    const db = new Database(join(dir, 'gridkeeper.db'), { readonly: true });
    try { return db.prepare('SELECT totp_secret FROM two_factor').pluck().get() as string; } finally { db.close(); }
  };
  assert.match(stored(), new RegExp(`^gk1\\.${key.id}\\.`));
  assert.equal(stored().includes(secret), false, 'the database does not hold the secret');
  assert.equal(createSecretBox({ kind: 'memory', keys: [key] }).open(stored(), 'totp:1'), secret);
  assert.throws(() => createSecretBox({ kind: 'memory', keys: [key] }).open(stored(), 'totp:2'), /integrity/, 'bound to its user');

  // a database from before sealing holds the secret in clear: the next start seals it
  const raw = new Database(join(dir, 'gridkeeper.db'));
  raw.prepare('UPDATE two_factor SET totp_secret = ?').run(secret);
  raw.close();
  app = await world.start();
  assert.match(stored(), /^gk1\./);
  world.clock.advance(60_000);
  assert.equal((await login2fa(app, secret, epoch())).status, 200, 'codes still work');

  // rotation from another process while the server runs
  const rotate = { out: [] as string[], err: [] as string[] };
  assert.equal(await runCli(['secrets', 'rotate', '--data-dir', dir], {}, { out: (l) => rotate.out.push(l), err: (l) => rotate.err.push(l) }), 0);
  const [fresh, ...rest] = parseSecretKeys(readFileSync(keyFile, 'utf8'), keyFile);
  assert.notEqual(fresh.id, key.id);
  assert.equal(rest.length, 0, 'the old key is gone from the file');
  assert.match(rotate.out[0], new RegExp(`^new key ${fresh.id}: 1 secret\\(s\\) sealed under it`));
  assert.match(stored(), new RegExp(`^gk1\\.${fresh.id}\\.`));
  world.clock.advance(60_000);
  assert.equal((await login2fa(app, secret, epoch())).status, 200, 'the running server reads the new key');
  await app.stop();
  app = await world.start();
  world.clock.advance(60_000);
  assert.equal((await login2fa(app, secret, epoch())).status, 200, 'and after a restart');
  await app.stop();
  assert.equal(await runCli(['secrets', 'rotate', '--data-dir', dir, 'extra'], {}, quiet), 2);
});

test('GRIDKEEPER_SECRET_KEY: a bad key stops the command; rotation needs the new key first, then seals under it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-seal-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const capture = () => { const out: string[] = []; const err: string[] = []; return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } }; };
  const oldKey = Buffer.alloc(32, 7).toString('base64');
  const newKey = Buffer.alloc(32, 9).toString('hex');
  const bad = capture();
  assert.equal(await runCli(['secrets', 'rotate', '--data-dir', dir], { GRIDKEEPER_SECRET_KEY: 'not-a-key' }, bad.io), 2);
  assert.match(bad.err[0], /GRIDKEEPER_SECRET_KEY: each key must be 32 bytes/);
  const one = capture();
  assert.equal(await runCli(['secrets', 'rotate', '--data-dir', dir], { GRIDKEEPER_SECRET_KEY: oldKey }, one.io), 2);
  assert.match(one.err[0], /holds one key/);
  // a clear secret in the database, as an older release left it
  const db = new Database(join(dir, 'gridkeeper.db'));
  db.exec("INSERT INTO users (email, password_hash, password_changed_at, created_at) VALUES ('u@x', 'x', 0, 0)");
  db.exec("INSERT INTO two_factor (user_id, totp_secret, totp_enabled_at) VALUES (1, 'JBSWY3DPEHPK3PXP', 0)");
  db.close();
  const two = capture();
  assert.equal(await runCli(['secrets', 'rotate', '--data-dir', dir], { GRIDKEEPER_SECRET_KEY: `${newKey},${oldKey}` }, two.io), 0);
  const [fresh] = parseSecretKeys(newKey, 'new');
  assert.match(two.out[0], new RegExp(`^key ${fresh.id}: 1 secret\\(s\\) sealed under it`));
  const check = new Database(join(dir, 'gridkeeper.db'), { readonly: true });
  const sealed = check.prepare('SELECT totp_secret FROM two_factor').pluck().get() as string;
  check.close();
  assert.equal(createSecretBox({ kind: 'memory', keys: [fresh] }).open(sealed, 'totp:1'), 'JBSWY3DPEHPK3PXP');
  assert.equal(existsSync(join(dir, KEY_FILE)), false, 'with the key in the environment no key file is written');
});
