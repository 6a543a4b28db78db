// Real concurrent HTTP requests against a real server on loopback: racing writers cannot lose an update.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createApp } from '../../src/boot/app.ts';
import { makeTestApp, T0, type TestApp } from '../support/app.ts';
import { addDevice, addMonitors, iso, storedDevice } from './fixtures.ts';

const N = 20;
let t: TestApp;
let server: Server;
let base: string;

before(async () => {
  t = await makeTestApp();
  const { app } = createApp(t.deps);
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    }) as Server;
  });
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json', connection: 'close', ...headers },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));
}

async function rootDevice(properties: Record<string, unknown>, lastUpdate: number): Promise<number> {
  const id = await addDevice(t, properties, lastUpdate);
  await addMonitors(t, 1, id, { mm: true });
  return id;
}

describe('concurrent writers over HTTP', () => {
  it(`${N} PATCHes with the same If-Unmodified-Since: exactly one wins, the others get 412, one change stored`, async () => {
    const d = await rootDevice({ owner: 'nobody' }, T0 - 60_000);
    const header = { 'if-unmodified-since': iso(T0 - 60_000) };
    const results = await Promise.all(Array.from({ length: N }, (_, i) =>
      send('PATCH', `/v1/device/${d}`, [{ op: 'replace', path: '/owner', value: `client-${i}` }], header)));
    const winners = results.filter((r) => r.status === 200);
    const losers = results.filter((r) => r.status === 412);
    assert.equal(winners.length, 1, JSON.stringify(results.map((r) => r.status)));
    assert.equal(losers.length, N - 1);
    for (const r of losers) assert.deepEqual(r.body, { statusCode: 412, error: 'Precondition Failed', message: 'At least one device was modified after the specified time', code: 'DEVICE_MODIFIED' });
    // the stored device is exactly the winner's change, written once
    const stored = (await storedDevice(t, d))!;
    assert.deepEqual(stored.properties, winners[0].body.device.properties);
    assert.match(stored.properties.owner as string, /^client-\d+$/);
    assert.equal(stored.lastUpdate, T0);
    assert.equal(winners[0].body.device.lastUpdate, iso(T0));
  });

  it(`${N} PATCHes without a precondition in one millisecond: none lost, lastUpdate strictly increasing`, async () => {
    const d = await rootDevice({ log: [] }, T0 - 60_000);
    const results = await Promise.all(Array.from({ length: N }, (_, i) =>
      send('PATCH', `/v1/device/${d}`, [{ op: 'add', path: '/log/-', value: i }])));
    assert.deepEqual(results.map((r) => r.status), Array(N).fill(200));
    const stored = (await storedDevice(t, d))!;
    assert.deepEqual([...(stored.properties.log as number[])].sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i));
    // the fake clock never moved: each change still got its own, later lastUpdate
    const times = results.map((r) => Date.parse(r.body.device.lastUpdate)).sort((a, b) => a - b);
    assert.deepEqual(times, Array.from({ length: N }, (_, i) => T0 + i));
    assert.equal(stored.lastUpdate, T0 + N - 1);
  });

  it(`${N} creates with the same nodeId: exactly one device`, async () => {
    const results = await Promise.all(Array.from({ length: N }, () =>
      send('POST', '/v1/device?roleId=1', { properties: { nodeId: 'race' } })));
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    assert.equal(results.filter((r) => r.status === 409 && r.body.code === 'NODE_ID_TAKEN').length, N - 1);
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM devices WHERE node_id = 'race'`))!.n, 1);
  });
});
