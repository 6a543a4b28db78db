// A license key never appears in the logs: every license operation, allowed and refused, at log level debug.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp } from '../support/app.ts';
import { createApp } from '../../src/boot/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { controllerScene, createLicenses } from './fixtures.ts';

describe('license keys and logs', () => {
  test('no key (generated, chosen, unknown or malformed) is written to the log', async (t) => {
    const testApp = await makeTestApp();
    t.after(() => testApp.close());
    const lines: string[] = [];
    // The same deps with a logger that captures everything; createApp logs one line per request through it.
    const { app } = createApp({ ...testApp.deps, log: createLogger('debug', (line) => lines.push(line)) });
    const send = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await app.request(path, {
        method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
      return { status: res.status, body: await res.json() as any };
    };

    const scene = await controllerScene(testApp);
    const created = await send('POST', '/v1/license', testApp.adminToken, { type: 'residential', duration: 365, count: 3 });
    assert.equal(created.status, 200);
    const chosen = await send('POST', '/v1/license', testApp.adminToken, { type: 'commercial', duration: 30, key: 'CHOSEN-SECRET-7Q' });
    assert.equal(chosen.status, 200);
    const [a, b, c] = created.body.licenses.map((l: any) => l.key as string);
    const unknown = 'GK-UNKNOWN-SECRET-99';
    const overlong = `GK-TOO-LONG-SECRET-${'Z'.repeat(40)}`;
    const statuses = [
      (await send('POST', '/v1/license', testApp.adminToken, { type: 'residential', duration: 1, key: 'CHOSEN-SECRET-7Q' })).status, // 409
      (await send('POST', '/v1/license', scene.stranger.token, { type: 'residential', duration: 1, key: 'STRANGER-SECRET-3' })).status, // 403
      (await send('POST', '/v1/license/claim', scene.manager.token, { licenseKey: a, nodeId: scene.nodeId })).status, // 200
      (await send('POST', '/v1/license/claim', scene.manager.token, { licenseKey: a, nodeId: scene.nodeId })).status, // 400
      (await send('POST', '/v1/license/claim', scene.reader.token, { licenseKey: b, nodeId: scene.nodeId })).status, // 403
      (await send('POST', '/v1/license/claim', scene.manager.token, { licenseKey: unknown, nodeId: scene.nodeId })).status, // 404
      (await send('POST', '/v1/license/activate', scene.stranger.token, { key: a })).status, // 403
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: a })).status, // 200
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: a })).status, // 400
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: ` ${c} ` })).status, // 200
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: unknown })).status, // 404
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: overlong })).status, // 400
      (await send('POST', '/v1/license/activate', scene.reader.token, { key: 'CHOSEN-SECRET-7Q', activationIso: 'bad' })).status, // 400
      (await send('GET', `/v1/license/controller/${scene.nodeId}`, scene.reader.token)).status, // 200
    ];
    assert.deepEqual(statuses, [409, 403, 200, 400, 403, 404, 403, 200, 400, 200, 404, 400, 400, 200]);

    // The capture works: one request line per request, naming the path.
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    assert.equal(requests.length, 16);
    assert.ok(requests.some((l) => l.path === '/v1/license/activate' && l.status === 200));
    const log = lines.join('');
    for (const secret of [a, b, c, 'CHOSEN-SECRET-7Q', 'STRANGER-SECRET-3', unknown, overlong]) {
      assert.ok(!log.includes(secret), `the log contains the key ${secret}`);
      // nor a recognisable part of it
      assert.ok(!log.includes(secret.slice(3, 14)), `the log contains part of the key ${secret}`);
    }
  });
});
