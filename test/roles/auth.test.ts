// Every route of roles, manages, members and explain refuses missing, garbage, refresh and partial tokens with 401 —
// before validation (401 precedes 400) — and appears in /openapi.json with its response schema.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { ALL } from './fixtures.ts';

const ROUTES: [method: string, path: string, body: unknown, pattern: string][] = [
  ['POST', '/v1/role?parentRoleId=1', { manages: ALL, role: { name: 'x', selfRights: ALL } }, '/v1/role'],
  ['PUT', '/v1/role/1', { name: 'x', selfRights: ALL }, '/v1/role/{roleId}'],
  ['POST', '/v1/role/query', {}, '/v1/role/query'],
  ['GET', '/v1/role', undefined, '/v1/role'],
  ['PUT', '/v1/role/1/manages?childRoleId=2', ALL, '/v1/role/{parentRoleId}/manages'],
  ['POST', '/v1/role/*/manages/query', {}, '/v1/role/{parentRoleId}/manages/query'],
  ['GET', '/v1/role/*/manages', undefined, '/v1/role/{parentRoleId}/manages'],
  ['PUT', '/v1/role/1/manages/1', ALL, '/v1/role/{parentRoleId}/manages/{managesId}'],
  ['DELETE', '/v1/role/1/manages/1', undefined, '/v1/role/{parentRoleId}/manages/{managesId}'],
  ['PUT', '/v1/role/1/member?userEmail=a@b', {}, '/v1/role/{roleId}/member'],
  ['POST', '/v1/role/*/member/query', {}, '/v1/role/{roleId}/member/query'],
  ['GET', '/v1/role/*/member', undefined, '/v1/role/{roleId}/member'],
  ['PUT', '/v1/role/1/member/1', {}, '/v1/role/{roleId}/member/{memberId}'],
  ['DELETE', '/v1/role/1/member/1', undefined, '/v1/role/{roleId}/member/{memberId}'],
  ['GET', '/v1/access/explain?roleId=1&right=roleManagement', undefined, '/v1/access/explain'],
];
const DEPRECATED = new Set(['GET /v1/role', 'GET /v1/role/{parentRoleId}/manages', 'GET /v1/role/{roleId}/member']);

describe('roles, manages, members, explain: authentication', () => {
  test('every route answers 401 without a valid access token', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (const [method, path, body] of ROUTES) await assertRequiresAuth(app, method, path, body);
  });

  test('401 comes before 400: an invalid request without a token is still 401', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (const [method, path] of ROUTES) {
      const res = await app.request(method, path.replace(/\?.*$/, '?bogus=1'), { body: method === 'GET' || method === 'DELETE' ? undefined : { bogus: 1 } });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
    }
  });

  test('every route is in /openapi.json with a 200 schema; the deprecated GETs say so', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const doc = (await app.request('GET', '/openapi.json')).body;
    for (const [method, , , pattern] of ROUTES) {
      const op = doc.paths[pattern]?.[method.toLowerCase()];
      assert.ok(op, `${method} ${pattern} is documented`);
      assert.ok(op.responses['200']?.content?.['application/json']?.schema, `${method} ${pattern} has a response schema`);
      assert.ok(op.description, `${method} ${pattern} describes its shapes`);
      assert.equal(op.deprecated === true, DEPRECATED.has(`${method} ${pattern}`), `${method} ${pattern} deprecated flag`);
      // access and sudo tokens, and API tokens with scope api (issue 14)
      assert.deepEqual(op.security, [{ accessBearerAuth: [] }, { sudoBearerAuth: [] }, { apiTokenAuth: [] }]);
    }
  });
});
