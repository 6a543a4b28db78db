// A JSON array where the schema wants an object is refused as such, at every depth — valibot alone would take `[]` for
// `{}` (a silently empty filter) or read Array.prototype methods off it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID } from '../support/app.ts';

test('arrays for objects: top level, nested, in list items; arrays where arrays belong still pass', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const token = app.adminToken;
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/v1/role/query', [], 'body: expected an object, received an array'],
    ['POST', '/v1/role/query', { filter: [] }, 'filter: expected an object, received an array'],
    ['POST', '/v1/device/query', { filter: [1] }, 'filter: expected an object, received an array'],
    ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { properties: [] }, 'properties: expected an object, received an array'],
    ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, [{ properties: {} }], 'body: expected an object, received an array'],
    ['POST', `/v1/role/${ROOT_ROLE_ID}/manages/query`, { filter: [[]] }, 'filter: expected an object, received an array'],
    ['POST', '/v1/license', [], 'body: expected an object, received an array'],
  ];
  for (const [method, path, body, message] of cases) {
    const res = await app.request(method, path, { token, body });
    assert.equal(assertError(res, 400, 'BAD_REQUEST').message, message, `${method} ${path} ${JSON.stringify(body)}`);
  }
  assert.equal((await app.request('POST', '/v1/role/query', { token, body: { filter: { id: [ROOT_ROLE_ID] } } })).status, 200);
  const count = (await app.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM devices`))?.n;
  assert.equal(count, 0, 'nothing was created');
});
