// Wrong join passwords are throttled per (user, client address) and per user, with growing delays — never per role:
// one member guessing cannot lock the password for the others (a per-role counter let 5 wrong guesses lock everyone out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { addChild, addRole, count, flags, NONE, userIn } from '../roles/fixtures.ts';
import { hashSecret } from '../../src/auth/passwords.ts';
import { FREE_PER_ADDRESS, FREE_PER_USER, delayAfter } from '../../src/roles/password-throttle.ts';

async function world(t: { after(fn: () => unknown): void }) {
  const app = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
  t.after(() => app.close());
  const [p] = await addChild(app, ROOT_ROLE_ID, NONE, flags('roleManagement'));
  const attacker = await userIn(app, p);
  const victim = await userIn(app, p);
  const hidden = await addRole(app, 'hidden', NONE, await hashSecret('correct-horse-1'));
  const join = async (user: { id: number }, password: string, from = '203.0.113.7') => app.request('PUT',
    `/v1/role/${p}/manages?childRoleId=${hidden}&childRolePassword=${encodeURIComponent(password)}`,
    { token: await app.token(user.id), body: NONE, headers: { 'x-forwarded-for': from } });
  return { app, p, attacker, victim, hidden, join };
}

function retryAfter(app: TestApp, res: Awaited<ReturnType<TestApp['request']>>): number {
  const body = assertError(res, 429, 'TOO_MANY_PASSWORD_CHECKS');
  assert.equal(res.headers.get('retry-after'), String(body.retryAfter));
  assert.match(body.message, /^too many wrong join passwords: try again in \d+ s$/);
  return body.retryAfter;
}

test('a guesser slows only himself: the victim joins with the right password at once', async (t) => {
  const { app, attacker, victim, join } = await world(t);
  for (let i = 0; i < FREE_PER_ADDRESS; i++) assertError(await join(attacker, `wrong-${i}-xxxxxx`), 403, 'ROLE_PASSWORD_INCORRECT');
  assert.equal(retryAfter(app, await join(attacker, 'correct-horse-1')), 1, 'even the right password waits');
  const res = await join(victim, 'correct-horse-1');
  assert.equal(res.status, 200, res.text);
  assert.equal(await count(app, 'join_failures', 'user_id = ?', victim.id), 0, 'a right password is no failure');
  assert.equal(await count(app, 'join_failures', 'user_id = ?', attacker.id), FREE_PER_ADDRESS);
});

test('delays double from failure to failure, from the latest failure; a refused attempt counts nothing', async (t) => {
  const { app, attacker, join } = await world(t);
  for (let i = 0; i < FREE_PER_ADDRESS; i++) assertError(await join(attacker, `wrong-${i}-xxxxxx`), 403, 'ROLE_PASSWORD_INCORRECT');
  for (let n = FREE_PER_ADDRESS; n < FREE_PER_ADDRESS + 6; n++) {
    const wait = delayAfter(n, FREE_PER_ADDRESS);
    assert.equal(wait, 1000 * 2 ** (n - FREE_PER_ADDRESS));
    assert.equal(retryAfter(app, await join(attacker, 'wrong-again-xx')), wait / 1000);
    app.clock.advance(wait - 1);
    assert.equal(retryAfter(app, await join(attacker, 'wrong-again-xx')), 1);
    app.clock.advance(1);
    assertError(await join(attacker, 'wrong-again-xx'), 403, 'ROLE_PASSWORD_INCORRECT');
  }
  assert.equal(delayAfter(100, FREE_PER_ADDRESS), 15 * 60 * 1000, 'capped at 15 minutes');
});

test('another address starts fresh, but the user count across addresses caps it; a day forgets', async (t) => {
  const { app, attacker, join } = await world(t);
  let guesses = 0;
  for (let address = 1; guesses < FREE_PER_USER; address++) {
    for (let i = 0; i < FREE_PER_ADDRESS && guesses < FREE_PER_USER; i++, guesses++) {
      assertError(await join(attacker, `wrong-${guesses}-xxxx`, `198.51.100.${address}`), 403, 'ROLE_PASSWORD_INCORRECT');
    }
  }
  // a new address: its own count is 0, the user's count is at FREE_PER_USER
  assert.equal(retryAfter(app, await join(attacker, 'correct-horse-1', '192.0.2.99')), 1);
  app.clock.advance(24 * 60 * 60 * 1000);
  assert.equal((await join(attacker, 'correct-horse-1', '192.0.2.99')).status, 200);
});
