// Password hashes: today's scrypt parameters (N = 2^15, r = 8, p = 1: a block above 32 MiB, which the C heap gives back
// at once), hashes of older parameters still verify, and a successful login or role join stores the same secret again
// with today's parameters — nothing else changes (no token is voided), and a failed attempt changes nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { sql } from 'kysely';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { dummyHash, hashSecret, lighterHashesForTests, needsRehash, verifySecret } from '../../src/auth/passwords.ts';
import { login, loginRefresh } from '../support/auth-helpers.ts';
import { NONE, flags, addRole, addChild, userIn } from '../roles/fixtures.ts';

/** A hash in the stored format with the parameters of the first release (N = 2^14), made here without passwords.ts. */
function olderHash(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret.normalize('NFKC'), salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
}

const userHash = async (app: TestApp, id: number) =>
  (await app.deps.db.get(sql<{ password_hash: string; token_generation: number }>`SELECT password_hash, token_generation FROM users WHERE id = ${id}`))!;
const roleHash = async (app: TestApp, id: number) =>
  (await app.deps.db.get(sql<{ password_hash: string }>`SELECT password_hash FROM roles WHERE id = ${id}`))!.password_hash;

describe('password hashes', () => {
  // the service's parameters, not the lighter ones test/support/app.ts turns on for the other suites
  before(() => lighterHashesForTests(false));
  after(() => lighterHashesForTests());

  test('new hashes use N = 32768, r = 8, p = 1 (128·r·N = 32 MiB); older parameters still verify and are marked for a re-hash', async () => {
    const fresh = await hashSecret('a-secret-123');
    assert.match(fresh, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    assert.equal(needsRehash(fresh), false);
    assert.equal(await verifySecret('a-secret-123', fresh), true);
    assert.equal(await verifySecret('a-secret-124', fresh), false);
    const old = olderHash('a-secret-123');
    assert.equal(needsRehash(old), true);
    assert.equal(await verifySecret('a-secret-123', old), true);
    assert.equal(await verifySecret('a-secret-124', old), false);
  });

  test('the unknown-user stand-in has today\'s parameters (one scrypt of the same cost to check) and matches no secret', async () => {
    const stand = dummyHash();
    assert.match(stand, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    assert.equal(Buffer.from(stand.split('$')[5]!, 'base64').length, 32);
    assert.equal(needsRehash(stand), false);
    assert.equal(dummyHash(), stand, 'made once per process');
    for (const secret of ['', 'admin-password-123', stand]) assert.equal(await verifySecret(secret, stand), false);
  });

  test('a login with an older hash stores it again with today\'s parameters; tokens issued before keep working', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const old = olderHash(ADMIN_PASSWORD);
    await app.deps.db.run(sql`UPDATE users SET password_hash = ${old} WHERE id = ${app.adminId}`);
    const generation = (await userHash(app, app.adminId)).token_generation;
    // a wrong password changes nothing
    assertError(await login(app, ADMIN_EMAIL, 'not-the-password-1'), 401, 'PASSWORD_INCORRECT');
    assert.equal((await userHash(app, app.adminId)).password_hash, old);
    const before = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const after = await userHash(app, app.adminId);
    assert.notEqual(after.password_hash, old);
    assert.match(after.password_hash, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await verifySecret(ADMIN_PASSWORD, after.password_hash), true);
    assert.equal(after.token_generation, generation, 'no token is voided by a re-hash');
    assert.equal((await app.request('GET', '/auth/accesstoken', { token: before })).status, 200);
    // the next login verifies the new hash and leaves it as it is
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    assert.equal((await userHash(app, app.adminId)).password_hash, after.password_hash);
  });

  test('a role join with an older role password stores it again with today\'s parameters; a wrong one changes nothing', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p] = await addChild(app, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const u = await userIn(app, p);
    const old = olderHash('correct-horse-1');
    const hidden = await addRole(app, 'hidden', NONE, old);
    const join = (password: string) => app.request('PUT', `/v1/role/${p}/manages?childRoleId=${hidden}&childRolePassword=${password}`, { token: u.token, body: NONE });
    assertError(await join('wrong-horse-1'), 403, 'ROLE_PASSWORD_INCORRECT');
    assert.equal(await roleHash(app, hidden), old);
    assert.equal((await join('correct-horse-1')).status, 200);
    const now = await roleHash(app, hidden);
    assert.match(now, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await verifySecret('correct-horse-1', now), true);
  });
});
