// Every answer carries nosniff, no-referrer, no-store and a deny-all CSP; the docs page carries a CSP naming exactly its
// inline script and style by hash; public unchanging bytes (the cost scripts) say they may be cached.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { makeTestApp } from '../support/app.ts';

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
