// Token attacks against the running executable: replaying tokens after logout and after a password change (also
// across restarts and a kill -9), tokens across restarts with rotated signing keys (old tokens keep verifying until
// they expire, new ones carry the new kid; a token whose key is not in the database is refused), and forged tokens
// (foreign keys, alg none, HMAC with the public key, tampered payloads, wrong kinds, expired, foreign or revoked
// sessions). Forgeries signed with the appliance's own key (read from the data dir) show the refusals come from the
// checks, not from a broken signature.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { sql } from 'kysely';
import type { Db } from '../../src/db/open.ts';
import { rotateSigningKey } from '../../src/auth/keys.ts';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, dropDatabases, kill9, loginOver, openCheckDb, openWritableDb, startGridkeeper,
} from '../support/harness.ts';

let dir: string;
let exe: string;
let dataDir: string;
let run: RunningBinary;
let http: HttpClient;

async function restart(how: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  http.close();
  if (how === 'SIGKILL') await kill9(run);
  else assert.equal(await run.stop('SIGTERM'), 0);
  run = await startGridkeeper(exe, dataDir);
  http = httpClient(run.url);
}

/** With the server stopped: change the data dir's database directly (as an operator's tool would). */
async function whileStopped(change: (db: Db) => Promise<void>): Promise<void> {
  http.close();
  assert.equal(await run.stop('SIGTERM'), 0);
  const db = await openWritableDb(dataDir);
  try { await change(db); } finally { await db.close(); }
  run = await startGridkeeper(exe, dataDir);
  http = httpClient(run.url);
}

const status = async (method: string, path: string, token: string) => (await http.request(method, path, { token, ...(method === 'POST' ? { body: {} } : {}) })).status;
const canRead = (token: string) => status('POST', '/v1/role/query', token);
const kid = (token: string) => decodeProtectedHeader(token).kid;

/** A token signed with `key` (a JWK private key), claims as the server writes them unless overridden. */
async function forge(key: JWK, header: { kid?: string; alg?: string }, claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const priv = await importJWK(key, header.alg ?? 'EdDSA');
  return new SignJWT({ typ: 'access', jti: randomBytes(12).toString('base64url'), iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: header.alg ?? 'EdDSA', ...(header.kid ? { kid: header.kid } : {}), typ: 'JWT' })
    .sign(priv);
}

async function signingKeys(): Promise<{ kid: string; private_jwk: string; public_jwk: string; retired_at: number | null }[]> {
  const db = await openCheckDb(dataDir);
  try {
    return await db.all(sql<{ kid: string; private_jwk: string; public_jwk: string; retired_at: number | null }>`SELECT kid, private_jwk, public_jwk, retired_at FROM signing_keys ORDER BY created_at`);
  } finally { await db.close(); }
}

before(async () => {
  ({ dir, exe } = isolatedBinary());
  dataDir = join(dir, 'data');
  run = await startGridkeeper(exe, dataDir);
  http = httpClient(run.url);
});

after(async () => {
  http?.close();
  if (run) await kill9(run);
  await dropDatabases();
  rmSync(dir, { recursive: true, force: true });
});

describe('token attacks on the executable', () => {
  it('replay after logout: the refresh token and its access tokens are dead, also after a restart and a kill -9', async () => {
    const s1 = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    const sibling = (await http.request('GET', '/auth/refreshtoken', { token: s1.refresh })).text;
    assert.equal((await http.request('POST', '/auth/logout', { token: s1.refresh })).status, 204);
    const dead = async () => {
      assert.equal(await status('GET', '/auth/accesstoken', s1.refresh), 401);
      assert.equal(await status('GET', '/auth/refreshtoken', s1.refresh), 401);
      assert.equal(await status('GET', '/auth/refreshtoken/validate', s1.refresh), 401);
      assert.equal(await status('POST', '/auth/logout', s1.refresh), 401);
      assert.equal(await status('GET', '/auth/accesstoken/validate', s1.access), 401);
      assert.equal(await canRead(s1.access), 401);
    };
    await dead();
    // the refresh token got from it before the logout is its own session and lives on
    assert.equal(await status('GET', '/auth/accesstoken', sibling), 200);
    await restart('SIGTERM');
    await dead();
    assert.equal(await status('GET', '/auth/accesstoken', sibling), 200);
    // a logout acknowledged just before a kill -9 holds too
    const s2 = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal((await http.request('POST', '/auth/logout', { token: s2.refresh })).status, 204);
    await restart('SIGKILL');
    assert.equal(await status('GET', '/auth/accesstoken', s2.refresh), 401);
    assert.equal(await canRead(s2.access), 401);
  });

  it('a password change ends every session of the user, for good', async () => {
    const admin = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    const email = 'rotating-user@tokens.test';
    const put = await http.request('PUT', `/v1/role/1/member?userEmail=${encodeURIComponent(email)}&password=first-password-1`, { token: admin.access, body: {} });
    assert.equal(put.status, 200, put.text);
    const a = await loginOver(http, email, 'first-password-1');
    const b = await loginOver(http, email, 'first-password-1');
    const change = await http.request('PUT', '/user/password', { token: a.access, body: { currentPassword: 'first-password-1', newPassword: 'second-password-2' } });
    assert.equal(change.status, 204, change.text);
    await restart('SIGKILL');
    for (const s of [a, b]) {
      assert.equal(await status('GET', '/auth/accesstoken', s.refresh), 401);
      assert.equal(await canRead(s.access), 401);
    }
    const old = await http.request('POST', '/auth/login', { body: { username: email, password: 'first-password-1' } });
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'PASSWORD_INCORRECT');
    const fresh = await loginOver(http, email, 'second-password-2');
    assert.equal(await canRead(fresh.access), 200);
  });

  it('rotated keys: old tokens verify until they expire, new ones carry the new kid; a key gone from the database is refused', async () => {
    const before = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    const oldKid = kid(before.access);
    assert.equal(kid(before.refresh), oldKid);
    const oldKey = (await signingKeys()).find((k) => k.kid === oldKid)!;
    assert.ok(oldKey && oldKey.retired_at === null);
    let newKid = '';
    await whileStopped(async (db) => { newKid = await rotateSigningKey(db, Date.now()); });
    assert.notEqual(newKid, oldKid);
    // tokens signed before the rotation keep working
    assert.equal(await canRead(before.access), 200);
    const minted = await http.request('GET', '/auth/accesstoken', { token: before.refresh });
    assert.equal(minted.status, 200);
    assert.equal(kid(minted.text), newKid, 'new tokens are signed with the new key');
    const after = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(kid(after.refresh), newKid);
    assert.equal(await canRead(minted.text), 200);
    // a token freshly signed with the retired key still verifies (the key is in the database)
    const { sid, sub } = decodeJwt(before.refresh) as { sid: string; sub: string };
    const byRetired = await forge(JSON.parse(oldKey.private_jwk) as JWK, { kid: oldKid }, { sub, sid });
    assert.equal(await canRead(byRetired), 200);
    // the retired key removed from the database: everything it signed is refused, the new key's tokens are not
    await whileStopped(async (db) => { await db.run(sql`DELETE FROM signing_keys WHERE kid = ${oldKid}`); });
    assert.equal(await canRead(before.access), 401);
    assert.equal(await status('GET', '/auth/accesstoken', before.refresh), 401);
    assert.equal(await canRead(byRetired), 401);
    assert.equal(await canRead(minted.text), 200);
    assert.equal(await status('GET', '/auth/accesstoken', after.refresh), 200);
  });

  it('forged tokens are refused; the same claims signed with the real key pass (the control)', async () => {
    const admin = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
    const current = (await signingKeys()).find((k) => k.retired_at === null)!;
    const realKey = JSON.parse(current.private_jwk) as JWK;
    const { sid, sub } = decodeJwt(admin.refresh) as { sid: string; sub: string };
    // control: the real key and real claims pass
    assert.equal(await canRead(await forge(realKey, { kid: current.kid }, { sub, sid })), 200);

    const { privateKey, publicKey } = await generateKeyPair('Ed25519', { extractable: true });
    const foreign = await exportJWK(privateKey);
    void publicKey;
    const now = Math.floor(Date.now() / 1000);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const [h, p, sig] = admin.access.split('.');
    const forged: [string, string][] = [
      ['a foreign key under the real kid', await forge(foreign, { kid: current.kid }, { sub, sid })],
      ['a foreign key under an unknown kid', await forge(foreign, { kid: 'not-a-kid' }, { sub, sid })],
      ['a foreign key without kid', await forge(foreign, {}, { sub, sid })],
      ['alg none', `${b64({ alg: 'none', kid: current.kid, typ: 'JWT' })}.${p}.`],
      ['HS256 keyed with the public key', await new SignJWT(decodeJwt(admin.access)).setProtectedHeader({ alg: 'HS256', kid: current.kid })
        .sign(Buffer.from(current.public_jwk))],
      ['a tampered payload', `${h}.${b64({ ...decodeJwt(admin.access), sub: '999' })}.${sig}`],
      ['a signature from another token', `${h}.${p}.${admin.refresh.split('.')[2]}`],
      ['a refresh token as access token', await forge(realKey, { kid: current.kid }, { sub, sid, typ: 'refresh', exp: now + 3600 })],
      ['a partial token as access token', await forge(realKey, { kid: current.kid }, { sub, typ: 'partial' })],
      ['an unknown kind', await forge(realKey, { kid: current.kid }, { sub, sid, typ: 'admin' })],
      ['an expired token', await forge(realKey, { kid: current.kid }, { sub, sid, iat: now - 3600, exp: now - 1 })],
      ['an unknown session', await forge(realKey, { kid: current.kid }, { sub, sid: 'no-such-session' })],
      ['another user\'s id on this session', await forge(realKey, { kid: current.kid }, { sub: String(Number(sub) + 1), sid })],
      ['a non-numeric subject', await forge(realKey, { kid: current.kid }, { sub: 'admin', sid })],
      ['a refresh token without session', await forge(realKey, { kid: current.kid }, { sub, typ: 'refresh', exp: now + 3600 })],
    ];
    assert.equal((await http.request('POST', '/auth/logout', { token: admin.refresh })).status, 204);
    forged.push(['a revoked session', await forge(realKey, { kid: current.kid }, { sub, sid })]);
    for (const [what, token] of forged) {
      const routes: [string, string][] = what.includes('refresh') ? [['GET', '/auth/accesstoken'], ['POST', '/v1/role/query']] : [['POST', '/v1/role/query'], ['GET', '/auth/accesstoken/validate']];
      for (const [method, path] of routes) {
        const r = await http.request(method, path, { token, ...(method === 'POST' ? { body: {} } : {}) });
        assert.equal(r.status, 401, `${what} at ${path}: ${r.status} ${r.text}`);
        assert.equal(r.body.code, 'UNAUTHENTICATED');
      }
    }
  });
});
