// The authentication API is in the OpenAPI document with its security schemes and text/plain token answers.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp } from '../support/app.ts';

describe('auth in openapi.json', () => {
  test('every auth path is documented with the right scheme', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const doc = (await app.request('GET', '/openapi.json')).body;
    const op = (path: string, method: string) => {
      assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} documented`);
      return doc.paths[path][method];
    };
    assert.deepEqual(op('/auth/login', 'post').security, []);
    assert.ok(op('/auth/login', 'post').responses['200'].content['text/plain']);
    assert.ok(op('/auth/login', 'post').requestBody.content['application/json'].schema.properties.username);
    assert.deepEqual(op('/auth/accesstoken', 'get').security, [{ refreshBearerAuth: [] }]);
    assert.ok(op('/auth/accesstoken', 'get').responses['200'].content['text/plain']);
    op('/auth/refreshtoken', 'get');
    op('/auth/refreshtoken/validate', 'get');
    op('/auth/accesstoken/validate', 'get');
    op('/auth/logout', 'post');
    op('/user/2fa', 'get');
    op('/user/2fa', 'delete');
    op('/user/2fa/totp/setup', 'post');
    op('/user/2fa/totp/enable', 'post');
    op('/user/2fa/recovery-code/authenticate', 'post');
    op('/user/2fa/recovery-code/regenerate', 'post');
    op('/user/password', 'put');
    assert.ok(op('/v1/user/{email}/tier', 'put').parameters.some((p: { name: string; in: string }) => p.name === 'email' && p.in === 'path'));
    const step = op('/user/2fa/totp/authenticate', 'post');
    assert.deepEqual(step.security.map((s: object) => Object.keys(s)[0]).sort(), ['accessBearerAuth', 'partialBearerAuth', 'sudoBearerAuth']);
    assert.deepEqual(op('/user/2fa', 'delete').security, [{ sudoBearerAuth: [] }]);
  });

  test('the Eniris parity routes (issue 17) are documented: public reset routes without security, the rest with a bearer', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const doc = (await app.request('GET', '/openapi.json')).body;
    const op = (path: string, method: string) => {
      assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} documented`);
      return doc.paths[path][method];
    };
    assert.deepEqual(op('/v1/auth/forgot-password', 'post').security, []);
    assert.deepEqual(op('/v1/auth/forgot-password', 'post').parameters.map((p: { name: string }) => p.name).sort(), ['language', 'origin']);
    assert.ok(op('/v1/auth/forgot-password', 'post').requestBody.content['application/json'].schema.properties.email);
    assert.deepEqual(op('/v1/auth/reset-password', 'post').security, []);
    assert.ok(op('/reset-password', 'get').responses['200'].content['text/html']);
    for (const [path, method] of [['/v1/company', 'get'], ['/v1/customer', 'post'], ['/v1/customer/query', 'post'],
      ['/v1/customer/{customerId}/order', 'post'], ['/v1/license/customer/{customerId}', 'get']]) {
      // an API token with the api scope is accepted wherever an access token is
    assert.deepEqual(op(path, method).security.map((s: object) => Object.keys(s)[0]).sort(), ['accessBearerAuth', 'apiTokenAuth', 'sudoBearerAuth'], path);
    }
    assert.deepEqual(op('/v1/company', 'get').parameters.map((p: { name: string }) => p.name).sort(), ['id', 'roleId', 'uuid', 'viewId', 'viewInsightsVersion']);
    assert.ok(op('/v1/license/customer/{customerId}', 'get').parameters.some((p: { name: string }) => p.name === 'includeDatalinks'));
  });
});
