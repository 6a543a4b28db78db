// Telemetry through the built executable over real HTTP: a gzip write, queries, the namespace list, and
// `gridkeeper telemetry prune` run as a second process while the service keeps serving. On PostgreSQL both processes
// use a fresh empty database (GRIDKEEPER_DATABASE_URL: test/support/harness.ts), which the server migrates.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { isolatedBinary, startBinary } from '../support/binary.ts';
import { databaseEnv, dropDatabases } from '../support/harness.ts';
import { call } from '../support/http-client.ts';

const PASSWORD = 'telemetry-e2e-password';
const DAY = 86_400_000;

describe('telemetry: the executable', () => {
  it('writes gzip line protocol, answers queries, and notices a prune run by another process', async () => {
    const { dir, exe } = isolatedBinary();
    const dataDir = join(dir, 'data');
    const dbEnv = await databaseEnv(dataDir);
    const server = await startBinary(exe, ['--data-dir', dataDir], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_LOG: 'error', ...dbEnv }, dir);
    try {
      const { url } = server;
      const refresh = (await call(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin@localhost', password: PASSWORD }) })).text;
      const token = (await call(`${url}/auth/accesstoken`, { token: refresh })).text;
      const device = await call(`${url}/v1/device?roleId=1`, { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ properties: { nodeId: 'plant-1' } }) });
      assert.equal(device.status, 200, device.text);

      const now = Date.now();
      const at = [now - 3 * DAY, now - 60_000, now - 30_000];
      const body = at.map((ms, i) => `power,nodeId=plant-1,phase=L${i + 1} p=${i + 0.5},e=${i}i ${ms}`).join('\n');
      const write = await call(`${url}/v1/telemetry?db=energy&rp=autogen&precision=ms`, {
        method: 'POST', token, headers: { 'content-encoding': 'gzip', 'content-type': 'text/plain; charset=utf-8' }, body: gzipSync(body),
      });
      assert.equal(write.status, 204, write.text);

      const from = { measurement: 'power', namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' } };
      const query = async () => {
        const res = await call(`${url}/v1/telemetry/query`, { method: 'POST', token, headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ select: ['p', 'e'], from, where: { tags: { nodeId: 'plant-1' } }, limit: 10 }) });
        assert.equal(res.status, 200, res.text);
        return (res.body.series ?? []).map((s: { tags: { phase: string }; values: unknown[][] }) => [s.tags.phase, ...s.values[0]]);
      };
      assert.deepEqual(await query(), at.map((ms, i) => [`L${i + 1}`, new Date(ms).toISOString(), i + 0.5, i]));

      const namespaces = await call(`${url}/v1/telemetry/namespaces`, { token });
      assert.equal(namespaces.body.namespaces.length, 1);
      assert.equal(namespaces.body.namespaces[0].shards, new Set(at.map((ms) => Math.floor(ms / DAY))).size);

      // A second process drops the old shard while the service runs.
      const prune = spawnSync(exe, ['telemetry', 'prune', '--older-than', '2d', '--data-dir', dataDir], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, ...dbEnv } });
      assert.equal(prune.status, 0, prune.stderr);
      assert.match(prune.stdout, /^dropped 1 shard table with data older than/);
      assert.deepEqual((await query()).map((r: unknown[]) => r[0]), ['L2', 'L3']);

      // and writing into the pruned window creates its table again
      const again = await call(`${url}/v1/telemetry?db=energy&rp=autogen&precision=ms`, { method: 'POST', token, body: `power,nodeId=plant-1,phase=L1 p=9 ${now - 3 * DAY}` });
      assert.equal(again.status, 204, again.text);
      assert.deepEqual((await query()).map((r: unknown[]) => r[0]), ['L1', 'L2', 'L3']);
    } finally {
      try {
        assert.equal(await server.stop(), 0);
      } finally {
        await dropDatabases();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
