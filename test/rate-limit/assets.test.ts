// GET /assets/estimateCost.{ts,py}: public, verbatim, with content type and file name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { makeTestApp } from '../support/app.ts';

const source = (name: string) => readFileSync(new URL(`../../src/assets/${name}`, import.meta.url), 'utf8');

describe('assets', () => {
  for (const name of ['estimateCost.ts', 'estimateCost.py']) {
    it(`GET /assets/${name} serves the script verbatim without a token`, async (t) => {
      const app = await makeTestApp();
      t.after(() => app.close());
      const res = await app.request('GET', `/assets/${name}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, source(name));
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(res.headers.get('content-disposition'), `inline; filename="${name}"`);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      // a token does not hurt either
      assert.equal((await app.request('GET', `/assets/${name}`, { token: app.adminToken })).text, source(name));
    });
  }

  it('unknown assets are 404; query parameters are refused like everywhere else; both are in the OpenAPI document', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.equal((await app.request('GET', '/assets/estimateCost.js')).status, 404);
    assert.equal((await app.request('GET', '/assets/estimateCost.py?x=1')).status, 400);
    const doc = (await app.request('GET', '/openapi.json')).body;
    assert.ok(doc.paths['/assets/estimateCost.ts']?.get);
    assert.ok(doc.paths['/assets/estimateCost.py']?.get);
  });
});
