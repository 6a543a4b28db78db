// The HTTP core: error shape for every failure, request ids, body limits, media types, health, metrics, OpenAPI, docs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError } from '../support/app.ts';

describe('http core', () => {
  test('healthz answers ok with the version', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok', version: app.deps.version, backend: app.deps.db.backend, database: 'reachable' });
  });

  test('unknown route and unknown method are 404 in the error shape', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const body = assertError(await app.request('GET', '/v1/nothing-here'), 404, 'NOT_FOUND');
    assert.deepEqual(body, { statusCode: 404, error: 'Not Found', message: 'no route for GET /v1/nothing-here', code: 'NOT_FOUND' });
    assertError(await app.request('DELETE', '/healthz'), 404, 'NOT_FOUND');
  });

  test('X-Request-Id echoes a well-formed id and replaces a bad one', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const good = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'abc.DEF-123_x' } });
    assert.equal(good.headers.get('x-request-id'), 'abc.DEF-123_x');
    const bad = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'has spaces<script>' } });
    const id = bad.headers.get('x-request-id');
    assert.ok(id && id !== 'has spaces<script>' && /^[A-Za-z0-9._-]{1,128}$/.test(id));
    const base64ish = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'aGVsbG8=.v2' } });
    assert.equal(base64ish.headers.get('x-request-id'), 'aGVsbG8=.v2');
    const long = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'a'.repeat(129) } });
    assert.notEqual(long.headers.get('x-request-id'), 'a'.repeat(129));
    const missing = await app.request('GET', '/nope');
    assert.ok(missing.headers.get('x-request-id'));
  });

  test('unknown query parameters are refused with 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const body = assertError(await app.request('GET', '/healthz?verbose=1'), 400, 'BAD_REQUEST');
    assert.match(body.message, /verbose/);
  });

  test('metrics are Prometheus text labelled by route pattern', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await app.request('GET', '/healthz');
    await app.request('GET', '/nope/123');
    const res = await app.request('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(res.text, /gridkeeper_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
    assert.match(res.text, /gridkeeper_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    assert.doesNotMatch(res.text, /nope\/123/);
    assert.match(res.text, /gridkeeper_database_size_bytes \d+/);
  });

  test('openapi.json is an OpenAPI 3.1 document listing the routes', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('GET', '/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    assert.ok(res.body.paths['/healthz'].get);
    assert.ok(res.body.components.securitySchemes.accessBearerAuth);
    assert.equal(res.body.components.securitySchemes.accessBearerAuth.scheme, 'bearer');
  });

  test('docs page is self-contained (no external scripts or styles)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('GET', '/docs');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.text, /openapi\.json/);
    assert.doesNotMatch(res.text, /<script[^>]+src=|<link[^>]+href=["']?https?:|https?:\/\/cdn/i);
  });
});

describe('validation messages', () => {
  test('name the deepest field of the union branch that came closest', async () => {
    const v = await import('valibot');
    const { parseWith } = await import('../../src/http/validate.ts');
    const S = v.strictObject({ a: v.union([v.strictObject({ x: v.number() }), v.strictObject({ y: v.strictObject({ z: v.string() }) })]) });
    assert.throws(() => parseWith(S, { a: { y: { z: 1 } } }, 'body'), (e: Error) => /^a\.y\.z: Invalid type: Expected string but received 1$/.test(e.message));
    assert.throws(() => parseWith(S, { a: { y: {}, w: 1 } }, 'query'), (e: Error) => e.message.startsWith('query.a.'));
    assert.throws(() => parseWith(v.strictObject({ list: v.array(v.number()) }), { list: [1, 'x'] }, 'body'), (e: Error) => /^list\[1\]: /.test(e.message));
    assert.throws(() => parseWith(v.strictObject({ k: v.number() }), { k: 1, extra: true }, 'body'), (e: Error) => e.message === 'extra: unknown field');
    assert.throws(() => parseWith(v.strictObject({ k: v.number() }), {}, 'query'), (e: Error) => e.message === 'query.k: required');
  });
});
