// Simultaneous activations and claims of one key over a real HTTP server: exactly one wins, the rest get the state error.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp } from '../support/app.ts';
import { controllerScene, createLicense, datalinks, licenseRow, postJson, startHttp } from './fixtures.ts';

describe('licenses under concurrency', () => {
  test('10 simultaneous activations of one key: exactly one 200, nine 400 ALREADY_ACTIVATED', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app);
    const users = await Promise.all(Array.from({ length: 10 }, (_, i) => app.createUser(`racer${i}@test`)));
    const server = await startHttp(app.deps);
    try {
      // Each racer asks for a different activation time, so the stored one tells who won.
      const results = await Promise.all(users.map((u, i) => postJson(`${server.url}/v1/license/activate`, u.token, {
        key: license.key, activationIso: new Date(Date.UTC(2026, 1, 1 + i)).toISOString(),
      })));
      const won = results.filter((r) => r.status === 200);
      const lost = results.filter((r) => r.status !== 200);
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of lost) {
        assert.equal(r.status, 400);
        assert.equal(r.body.code, 'ALREADY_ACTIVATED');
      }
      const stored = (await licenseRow(app, license.id))!.activation_date;
      assert.equal(new Date(stored!).toISOString(), won[0].body.license.activationDate);
    } finally {
      await server.close();
    }
  });

  test('10 simultaneous claims of one key (to 10 controllers): exactly one 200 and one datalink row', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scenes = [];
    for (let i = 0; i < 10; i++) scenes.push(await controllerScene(app, `ctrl-${i}`));
    const license = await createLicense(app);
    const server = await startHttp(app.deps);
    try {
      const results = await Promise.all(scenes.map((s) => postJson(`${server.url}/v1/license/claim`, s.manager.token, {
        licenseKey: license.key, nodeId: s.nodeId,
      })));
      const won = results.filter((r) => r.status === 200);
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 400);
        assert.equal(r.body.code, 'ALREADY_CLAIMED');
      }
      const links = await datalinks(app);
      assert.equal(links.length, 1);
      const winner = scenes.find((s) => s.nodeId === won[0].body.license.nodeId)!;
      assert.equal(links[0].device_id, winner.deviceId);
    } finally {
      await server.close();
    }
  });

  test('10 simultaneous claims of one key to one controller: exactly one 200', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    const server = await startHttp(app.deps);
    try {
      const results = await Promise.all(Array.from({ length: 10 }, () =>
        postJson(`${server.url}/v1/license/claim`, scene.manager.token, { licenseKey: license.key, nodeId: scene.nodeId })));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
      assert.ok(results.every((r) => r.status === 200 || r.body.code === 'ALREADY_CLAIMED'));
      assert.equal((await datalinks(app)).length, 1);
    } finally {
      await server.close();
    }
  });
});
