// GRIDKEEPER_ADMIN_PASSWORD_FILE: the file with the generated first admin password goes away at the admin's first
// successful login, and at nothing else. (That the first start writes it, 0600 and instead of stderr, is tested on the
// executable: test/e2e/binary.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, assertError, makeTestApp } from '../support/app.ts';

test('the first admin password file is removed by the admin\'s first login, not by a failed one or another user\'s', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-first-password-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'admin-password');
  writeFileSync(file, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
  const app = await makeTestApp({ env: { GRIDKEEPER_ADMIN_PASSWORD_FILE: file } });
  t.after(() => app.close());
  const login = (username: string, password: string) => app.request('POST', '/auth/login', { body: { username, password } });

  assertError(await login(ADMIN_EMAIL, 'not-the-password'), 401, 'PASSWORD_INCORRECT');
  assert.ok(existsSync(file), 'a wrong password leaves the file');
  await app.createUser('operator@site', 'operator-password-1');
  assert.equal((await login('operator@site', 'operator-password-1')).status, 200);
  assert.ok(existsSync(file), 'another user\'s login leaves the file');

  const res = await login(ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD);
  assert.equal(res.status, 200, res.text);
  assert.equal(existsSync(file), false, 'the admin\'s login removes it');
  assert.equal((await login(ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200, 'later logins do not need it');
});
