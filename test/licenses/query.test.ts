// POST /v1/license/query (ours): root members list every license, newest first, filtered by claimed / activated and
// paged; anyone else is refused; bad bodies are 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError } from '../support/app.ts';
import { claim, controllerScene, createLicenses } from './fixtures.ts';

test('root lists every license newest first, with filters, paging and the matching total', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const first = await createLicenses(app, { count: 2 });
  app.clock.advance(1000);
  const second = await createLicenses(app, { count: 3 });
  const { manager } = await controllerScene(app, 'ctrl-q');
  await claim(app, manager, second[0].key, 'ctrl-q');
  const act = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: first[0].key } });
  assert.equal(act.status, 200, act.text);
  const list = async (body?: unknown) => {
    const res = await app.request('POST', '/v1/license/query', { token: app.adminToken, body });
    assert.equal(res.status, 200, res.text);
    return res.body as { licenses: Array<{ id: string; key: string }>; total: number };
  };
  const all = await list();
  assert.equal(all.total, 5);
  const byCreation = (ls: Array<{ id: string }>) => [...ls].sort((a, b) => (a.id < b.id ? -1 : 1)).map((l) => l.id);
  assert.deepEqual(all.licenses.slice(0, 3).map((l) => l.id), byCreation(second), 'the newest (later creation) first, ties by id');
  assert.deepEqual(all.licenses.slice(3).map((l) => l.id), byCreation(first));
  assert.deepEqual(all.licenses[0], (await app.request('POST', '/v1/license/query', { token: app.adminToken, body: { limit: 1 } })).body.licenses[0]);
  const page = await list({ limit: 2, offset: 2 });
  assert.deepEqual(page.licenses.map((l) => l.id), all.licenses.slice(2, 4).map((l) => l.id));
  assert.equal(page.total, 5);
  assert.deepEqual((await list({ filter: { claimed: true } })).licenses.map((l) => l.key), [second[0].key]);
  assert.equal((await list({ filter: { claimed: false } })).total, 4);
  assert.deepEqual((await list({ filter: { activated: true } })).licenses.map((l) => l.key), [first[0].key]);
  assert.equal((await list({ filter: { activated: false, claimed: false } })).total, 3);
});

test('anyone but a root member is refused; bad bodies are 400', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const user = await app.createUser('plain@example.test');
  assertError(await app.request('POST', '/v1/license/query', { token: user.token, body: {} }), 403, 'FORBIDDEN');
  assertError(await app.request('POST', '/v1/license/query', { body: {} }), 401, 'UNAUTHENTICATED');
  for (const body of [{ limit: 0 }, { limit: 1001 }, { offset: -1 }, { filter: { claimed: 'yes' } }, { filter: { key: ['x'] } }, []]) {
    assertError(await app.request('POST', '/v1/license/query', { token: app.adminToken, body }), 400, 'BAD_REQUEST');
  }
});
