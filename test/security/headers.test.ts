// Every answer carries nosniff, no-referrer, no-store and a deny-all CSP; the docs page carries a CSP naming exactly its
// inline script and style by hash; public unchanging bytes (the cost scripts) say they may be cached.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { makeTestApp } from '../support/app.ts';
import { startServer } from '../../src/boot/server.ts';
import { API_POLICY } from '../../src/http/security-headers.ts';

test('security headers on answers of every kind', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const answers = [
    await app.request('GET', '/healthz'),
    await app.request('POST', '/v1/role/query', { token: app.adminToken, body: {} }),
    await app.request('POST', '/v1/role/query', { body: {} }), // 401
    await app.request('GET', '/no/such/route'), // 404
    await app.request('POST', '/auth/login', { body: { username: 'admin@localhost', password: 'wrong-password' } }),
    await app.request('GET', '/auth/accesstoken', { token: app.adminToken }), // a token-bearing route refusing
  ];
  for (const res of answers) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'none'; frame-ancestors 'none'/);
  }
  const script = await app.request('GET', '/assets/estimateCost.py');
  assert.equal(script.headers.get('cache-control'), 'public, max-age=3600');
  assert.equal(script.headers.get('x-content-type-options'), 'nosniff');
});

test('the docs page: a CSP with the hashes of its own inline script and style, nothing else', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const res = await app.request('GET', '/docs');
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy')!;
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
  const script = /<script>([\s\S]*?)<\/script>/.exec(res.text)![1];
  const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)![1];
  assert.match(csp, /^default-src 'none'; /);
  assert.ok(csp.includes(`script-src ${hash(script)};`), csp);
  assert.ok(csp.includes(`style-src ${hash(style)};`), csp);
  assert.ok(csp.includes("connect-src 'self'"));
  assert.equal(/unsafe-inline|unsafe-eval|\*/.test(csp), false);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
});

test('served over HTTP: the same headers, written onto the Node response, and a route\'s own win', async (t) => {
  const app = await makeTestApp({ env: { GRIDKEEPER_PORT: '0', GRIDKEEPER_HOST: '127.0.0.1' } });
  const running = await startServer(app.deps, () => {});
  t.after(async () => { await running.stop(); await app.close(); });
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${running.url}${path}`, { headers });
  const answers = [
    await get('/healthz'),
    await get('/no/such/route'),
    await fetch(`${running.url}/v1/role/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), // 401
    await fetch(`${running.url}/v1/role/query`, { method: 'POST', headers: { authorization: `Bearer ${app.adminToken}`, 'content-type': 'application/json' }, body: '{}' }),
  ];
  assert.deepEqual(answers.map((r) => r.status), [200, 404, 401, 200]);
  for (const res of answers) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('content-security-policy'), API_POLICY);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  }
  // a route's own Cache-Control and Content-Security-Policy replace the defaults (one value each, not two)
  const docs = await get('/docs');
  assert.equal(docs.headers.get('cache-control'), 'public, max-age=300');
  assert.match(docs.headers.get('content-security-policy') ?? '', /^default-src 'none'; script-src 'sha256-/);
  assert.equal(docs.headers.get('x-content-type-options'), 'nosniff');
  const script = await get('/assets/estimateCost.py');
  assert.equal(script.headers.get('cache-control'), 'public, max-age=3600');
  assert.equal(script.headers.get('content-security-policy'), API_POLICY);
  // a well-formed incoming id is echoed, another replaced
  assert.equal((await get('/healthz', { 'x-request-id': 'abc.DEF-123_x' })).headers.get('x-request-id'), 'abc.DEF-123_x');
  const replaced = (await get('/healthz', { 'x-request-id': 'has spaces<script>' })).headers.get('x-request-id');
  assert.match(replaced ?? '', /^[0-9a-f-]{36}$/);
  await Promise.all([docs.text(), script.text(), ...answers.map((r) => r.text())]);
});
