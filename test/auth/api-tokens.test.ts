// API tokens (issue 14): creation (secret shown once, stored as SHA-256), listing without secrets, deletion, scopes,
// where they are accepted and where never, expiry and lastUsedAt.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { testBackend } from '../support/postgres.ts';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from '../support/app.ts';
import { accessFrom, assertRequiresAuth, enableTotp, loginRefresh, totpCode } from '../support/auth-helpers.ts';
import { V1 } from '../telemetry/fixtures.ts';
import { addDevice, addMember, addMonitors, addRole } from '../devices/fixtures.ts';

const DAY = 86_400_000;

let writers = 0;

/** A user (premium tier) in a fresh role with monitorManagement on each named device (created when missing). */
async function writer(t: TestApp, ...nodeIds: string[]): Promise<{ id: number; token: string }> {
  const { db } = t.deps;
  const user = await t.createUser(`writer${++writers}-${process.pid}@test`);
  // the premium bucket, so that queries are not refused by the cost limiter (tested elsewhere)
  await db.run(sql`UPDATE users SET tier = 'premium' WHERE id = ${user.id}`);
  const roleId = await addRole(t, `role of ${user.id}`);
  await addMember(t, roleId, user.id);
  for (const nodeId of nodeIds) {
    const device = (await db.get(sql<{ id: number }>`SELECT id FROM devices WHERE node_id = ${nodeId}`))?.id
      ?? await addDevice(t, { nodeId, nodeType: 'smartgridController' });
    await addMonitors(t, roleId, device, { mm: true });
  }
  return user;
}

const tokenCount = async (t: TestApp) => (await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM api_tokens`))!.n;

async function createToken(t: TestApp, body: unknown, token = t.adminToken) {
  return t.request('POST', '/user/tokens', { token, body });
}

async function newToken(t: TestApp, scopes: string[], token = t.adminToken, extra: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const res = await createToken(t, { name: `t-${scopes.join('+')}`, scopes, ...extra }, token);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

describe('api tokens: happy', () => {
  test('POST /user/tokens answers the token once; only its SHA-256 is stored', async () => {
    const t = await makeTestApp();
    const res = await createToken(t, { name: 'grafana', scopes: ['telemetry:read', 'api'], expiresInDays: 30 });
    assert.equal(res.status, 201, res.text);
    const { token, ...rest } = res.body;
    assert.match(token, /^gk_[A-Za-z0-9_-]{32}$/); // 24 random bytes = 192 bits
    assert.deepEqual(rest, {
      id: rest.id, name: 'grafana', scopes: ['telemetry:read', 'api'],
      createdAt: new Date(t.clock.now()).toISOString(), expiresAt: new Date(t.clock.now() + 30 * DAY).toISOString(), lastUsedAt: null,
    });
    const row = (await t.deps.db.get(sql<Record<string, unknown>>`SELECT * FROM api_tokens WHERE id = ${rest.id}`))!;
    assert.equal(row.token_hash, createHash('sha256').update(token).digest('hex'));
    assert.equal(JSON.stringify(row).includes(token.slice(3)), false, 'the secret itself is not stored');
    const list = await t.request('GET', '/user/tokens', { token: t.adminToken });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { tokens: [rest] });
  });

  test('two tokens never share a secret', async () => {
    const t = await makeTestApp();
    const a = await newToken(t, ['api']);
    const b = await newToken(t, ['api']);
    assert.notEqual(a.token, b.token);
    assert.notEqual(a.id, b.id);
  });

  test('scope api works as Bearer and as Token wherever an access token does, and records lastUsedAt', async () => {
    const t = await makeTestApp();
    const { id, token } = await newToken(t, ['api']);
    t.clock.advance(5000);
    const a = await t.request('POST', '/v1/device/query', { body: {}, headers: { authorization: `Bearer ${token}` } });
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.body, { device: [] });
    const b = await t.request('POST', '/v1/role/query', { body: {}, headers: { authorization: `Token ${token}` } });
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body.role[0].id, 1);
    const list = await t.request('GET', '/user/tokens', { token: t.adminToken });
    assert.equal(list.body.tokens.find((x: any) => x.id === id).lastUsedAt, new Date(t.clock.now()).toISOString());
  });

  test('lastUsedAt moves on at most once a minute', async () => {
    const t = await makeTestApp();
    const { id, token } = await newToken(t, ['api']);
    const used = async () => (await t.deps.db.get(sql<{ last_used_at: number | null }>`SELECT last_used_at FROM api_tokens WHERE id = ${id}`))?.last_used_at;
    await t.request('GET', '/v1/telemetry/namespaces', { token });
    const first = t.clock.now();
    assert.equal(await used(), first);
    t.clock.advance(30_000);
    await t.request('GET', '/v1/telemetry/namespaces', { token });
    assert.equal(await used(), first);
    t.clock.advance(30_000);
    await t.request('GET', '/v1/telemetry/namespaces', { token });
    assert.equal(await used(), t.clock.now());
  });

  // (telemetry is stored in the embedded SQLite database only, for now: on PostgreSQL its routes answer 501)
  const telemetry = { skip: testBackend() === 'postgres' ? 'telemetry is not on PostgreSQL yet' : false };

  test('telemetry:write writes, telemetry:read queries, and neither does the other', telemetry, async () => {
    const t = await makeTestApp();
    const w = await writer(t, 'n1');
    const wt = (await newToken(t, ['telemetry:write'], w.token)).token;
    const rt = (await newToken(t, ['telemetry:read'], w.token)).token;
    const line = 'power,nodeId=n1 p=1 1767225599000000000';
    const write = (token: string) => t.request('POST', `/v1/telemetry?${V1}`, { token, raw: line, headers: { 'content-type': 'text/plain' } });
    assert.equal((await write(wt)).status, 204);
    assertError(await write(rt), 403, 'INSUFFICIENT_SCOPE');
    const q = { select: ['p'], from: { measurement: 'power', database: 'energy', retentionPolicy: 'autogen' }, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: 1767225599000 }] } };
    const read = (token: string) => t.request('POST', '/v1/telemetry/query', { token, body: q });
    const ok = await read(rt);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.series[0].values, [['2025-12-31T23:59:59.000Z', 1]]);
    assertError(await read(wt), 403, 'INSUFFICIENT_SCOPE');
    // telemetry scopes open nothing else
    assertError(await t.request('POST', '/v1/device/query', { token: rt, body: {} }), 403, 'INSUFFICIENT_SCOPE');
    assertError(await t.request('GET', '/v1/telemetry/namespaces', { token: wt }), 403, 'INSUFFICIENT_SCOPE');
  });

  test('an API token acts with its user\'s rights, not more', telemetry, async () => {
    const t = await makeTestApp();
    const w = await writer(t, 'n1');
    const other = await writer(t, 'n2');
    const token = (await newToken(t, ['api'], w.token)).token;
    const res = await t.request('POST', `/v1/telemetry?${V1}`, { token, raw: 'power,nodeId=n2 p=1', headers: { 'content-type': 'text/plain' } });
    assertError(res, 403, 'FORBIDDEN');
    assert.ok(other.id > 0);
  });

  test('DELETE /user/tokens/{id}: refused at once afterwards', async () => {
    const t = await makeTestApp();
    const { id, token } = await newToken(t, ['api']);
    assert.equal((await t.request('POST', '/v1/role/query', { token, body: {} })).status, 200);
    const del = await t.request('DELETE', `/user/tokens/${id}`, { token: t.adminToken });
    assert.equal(del.status, 204);
    assertError(await t.request('POST', '/v1/role/query', { token, body: {} }), 401, 'UNAUTHENTICATED');
    assert.equal(await tokenCount(t), 0);
    assertError(await t.request('DELETE', `/user/tokens/${id}`, { token: t.adminToken }), 404, 'NOT_FOUND');
  });

  test('an expired token is refused', async () => {
    const t = await makeTestApp();
    const { token } = await newToken(t, ['api'], t.adminToken, { expiresInDays: 1 });
    t.clock.advance(DAY - 1);
    assert.equal((await t.request('POST', '/v1/role/query', { token, body: {} })).status, 200);
    t.clock.advance(1);
    const res = assertError(await t.request('POST', '/v1/role/query', { token, body: {} }), 401, 'UNAUTHENTICATED');
    assert.equal(res.message, 'token expired');
  });
});

describe('api tokens: validation', () => {
  test('bad bodies are 400 naming the field', async () => {
    const t = await makeTestApp();
    const cases: [unknown, RegExp][] = [
      [{ scopes: ['api'] }, /name/],
      [{ name: '', scopes: ['api'] }, /name/],
      [{ name: 'x'.repeat(101), scopes: ['api'] }, /name/],
      [{ name: 'x', scopes: [] }, /scopes/],
      [{ name: 'x', scopes: ['admin'] }, /scopes\[0\]/],
      [{ name: 'x', scopes: ['api', 'api'] }, /scopes/],
      [{ name: 'x', scopes: ['api'], expiresInDays: 0 }, /expiresInDays/],
      [{ name: 'x', scopes: ['api'], expiresInDays: 3651 }, /expiresInDays/],
      [{ name: 'x', scopes: ['api'], expiresInDays: 1.5 }, /expiresInDays/],
      [{ name: 'x', scopes: ['api'], extra: 1 }, /extra/],
    ];
    for (const [body, re] of cases) {
      const err = assertError(await createToken(t, body), 400, 'BAD_REQUEST');
      assert.match(err.message, re, JSON.stringify(body));
    }
    assert.equal(await tokenCount(t), 0);
  });

  test('at most 100 tokens per user -> 409 TOO_MANY_TOKENS', async () => {
    const t = await makeTestApp();
    const now = t.clock.now();
    for (let i = 0; i < 99; i++) {
      await t.deps.db.run(sql`INSERT INTO api_tokens (user_id, name, scopes, token_hash, created_at) VALUES (${t.adminId}, 'x', '["api"]', ${`h${i}`}, ${now})`);
    }
    await newToken(t, ['api']);
    assertError(await createToken(t, { name: 'one too many', scopes: ['api'] }), 409, 'TOO_MANY_TOKENS');
    assert.equal(await tokenCount(t), 100);
  });
});

describe('api tokens: security', () => {
  test('the token routes need a token; an API token never manages tokens, passwords or 2FA', async () => {
    const t = await makeTestApp();
    await assertRequiresAuth(t, 'GET', '/user/tokens');
    await assertRequiresAuth(t, 'POST', '/user/tokens', { name: 'x', scopes: ['api'] });
    await assertRequiresAuth(t, 'DELETE', '/user/tokens/1');
    const { id, token } = await newToken(t, ['api', 'telemetry:read', 'telemetry:write']);
    const refused: [string, string, unknown][] = [
      ['GET', '/user/tokens', undefined],
      ['POST', '/user/tokens', { name: 'x', scopes: ['api'] }],
      ['DELETE', `/user/tokens/${id}`, undefined],
      ['PUT', '/user/password', { newPassword: 'new-password-123' }],
      ['GET', '/user/2fa', undefined],
      ['POST', '/user/2fa/totp/setup', undefined],
      ['POST', '/user/2fa/totp/authenticate', { totp: '123456' }],
      ['POST', '/user/2fa/recovery-code/regenerate', undefined],
      ['DELETE', '/user/2fa', undefined],
      ['GET', '/auth/accesstoken', undefined],
      ['GET', '/auth/accesstoken/validate', undefined],
      ['POST', '/auth/logout', undefined],
    ];
    for (const [method, path, body] of refused) {
      for (const scheme of ['Bearer', 'Token']) {
        const res = await t.request(method, path, { body, headers: { authorization: `${scheme} ${token}` } });
        assertError(res, 401, 'UNAUTHENTICATED');
      }
    }
    assert.equal(await tokenCount(t), 1);
  });

  test('an unknown or altered gk_ token is 401; a JWT is not accepted with the Token scheme', async () => {
    const t = await makeTestApp();
    const { token } = await newToken(t, ['api']);
    const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    assertError(await t.request('POST', '/v1/device/query', { body: {}, headers: { authorization: `Bearer ${altered}` } }), 401, 'UNAUTHENTICATED');
    assertError(await t.request('POST', '/v1/device/query', { body: {}, headers: { authorization: `Token ${t.adminToken}` } }), 401, 'UNAUTHENTICATED');
  });

  test('another user\'s token cannot be listed or deleted (404)', async () => {
    const t = await makeTestApp();
    const { id } = await newToken(t, ['api']);
    const u = await t.createUser('other@test');
    const list = await t.request('GET', '/user/tokens', { token: u.token });
    assert.deepEqual(list.body, { tokens: [] });
    assertError(await t.request('DELETE', `/user/tokens/${id}`, { token: u.token }), 404, 'NOT_FOUND');
    assert.equal(await tokenCount(t), 1);
  });

  test('with 2FA on, creating a token needs a sudo token', async () => {
    const t = await makeTestApp();
    const refresh = await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const { secret } = await enableTotp(t, await accessFrom(t, refresh));
    const access = await accessFrom(t, refresh);
    assertError(await createToken(t, { name: 'x', scopes: ['api'] }, access), 403, 'SUDO_REQUIRED');
    t.clock.advance(30_000);
    const step = await t.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(t, secret) } });
    assert.equal(step.status, 200, step.text);
    const res = await createToken(t, { name: 'x', scopes: ['api'] }, step.body.sudoToken);
    assert.equal(res.status, 201, res.text);
  });
});
