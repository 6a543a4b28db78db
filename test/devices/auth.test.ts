// Every device and monitors route refuses a missing, garbage, refresh or partial token with 401, before validating
// anything (check order 401 -> 400), and answers a user without rights 403/404 (covered per route in the other files).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';

const ROUTES: [string, string, unknown?][] = [
  ['POST', '/v1/device?roleId=1', { properties: {} }],
  ['POST', '/v1/device/query', {}],
  ['GET', '/v1/device'],
  ['PATCH', '/v1/device/1', []],
  ['PUT', '/v1/device/1', { properties: {} }],
  ['GET', '/v1/device/schema'],
  ['GET', '/v1/device/schema/battery'],
  ['PUT', '/v1/role/1/monitors?deviceId=1', { monitorManagement: true, reads: [], edits: [] }],
  ['PUT', '/v1/role/1/monitors/1', { monitorManagement: true, reads: [], edits: [] }],
  ['DELETE', '/v1/role/1/monitors/1'],
  ['POST', '/v1/role/*/monitors/query', {}],
  ['GET', '/v1/role/1/monitors'],
];

describe('devices and monitors: authentication', () => {
  for (const [method, path, body] of ROUTES) {
    it(`${method} ${path} needs an access token`, async (t) => {
      const app = await makeTestApp();
      t.after(() => app.close());
      await assertRequiresAuth(app, method, path, body);
    });
  }

  it('401 comes before 400: an invalid body without a token is still 401', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assertError(await app.request('POST', '/v1/device?roleId=x', { body: { properties: 5 } }), 401, 'UNAUTHENTICATED');
    assertError(await app.request('PATCH', '/v1/device/x', { body: 'nope' }), 401, 'UNAUTHENTICATED');
  });

  it('415 comes before 401 for a body that is not JSON', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('POST', '/v1/device/query', { raw: '{}', headers: { 'content-type': 'text/plain' } });
    assertError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const patch = await app.request('PATCH', '/v1/device/1', { token: app.adminToken, raw: '[]', headers: { 'content-type': 'application/json-patch+json' } });
    assert.equal(patch.status, 404); // the JSON Patch media type is accepted; device 1 does not exist
  });
});
