// Several nodes on one PostgreSQL database (issue 13): what one node writes, the others answer at once, and the
// checks that must hold exactly hold across nodes — a session ended on one node is ended on all, a device changed on
// one is read changed on the next, and an If-Unmodified-Since race spread over three nodes has one winner. Each node
// is a test app of its own (its own process state and connection pool) on the same database and clock.
// PostgreSQL only: the embedded SQLite backend is one process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ADMIN_EMAIL, ADMIN_PASSWORD, assertError, makeTestApp, ROOT_ROLE_ID, T0, threeNodes, type TestApp, type TestResponse } from '../support/app.ts';
import { TEST_SERVER_URL, testBackend } from '../support/postgres.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { enableTotp, login, totpCode } from '../support/auth-helpers.ts';
import { ALL, NONE, addChild, addRole, flags, userIn } from '../roles/fixtures.ts';
import { hashSecret } from '../../src/auth/passwords.ts';
import { FREE_PER_ADDRESS } from '../../src/roles/password-throttle.ts';
import { addDevice, addMonitors, storedDevice } from '../devices/fixtures.ts';
import { createLicense, datalinks } from '../licenses/fixtures.ts';
import { rotateSigningKey } from '../../src/auth/keys.ts';
import { ConfigError } from '../../src/lib/config.ts';
import { createHash, randomBytes } from 'node:crypto';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';
const iso = (ms: number) => new Date(ms).toISOString();
const FLAGS_ALL = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
const kidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid as string;
const statuses = (rs: readonly TestResponse[]) => rs.map((r) => r.status);


describe('several nodes on one database', { skip }, () => {
  it('log in on A, get an access token on B, use it on C; log out on C: the session is refused on A and B', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const login = await a.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    const access = await b.request('GET', '/auth/accesstoken', { token: login.text });
    assert.equal(access.status, 200, access.text);
    assert.deepEqual((await c.request('GET', '/auth/accesstoken/validate', { token: access.text })).body, { userId: a.adminId });
    assert.equal((await c.request('POST', '/auth/logout', { token: login.text })).status, 204);
    for (const node of [a, b]) {
      assert.equal((await node.request('GET', '/auth/accesstoken', { token: login.text })).status, 401);
      assert.equal((await node.request('GET', '/auth/refreshtoken/validate', { token: login.text })).status, 401);
    }
  });

  it('a device created and patched on A is read, changed, on B and C at once', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const created = await a.request('POST', '/v1/device?roleId=1', { token: a.adminToken, body: { properties: { nodeId: 'n1', owner: 'first' } } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.device.id;
    const patched = await a.request('PATCH', `/v1/device/${id}`, { token: a.adminToken, body: [{ op: 'replace', path: '/owner', value: 'second' }] });
    assert.equal(patched.status, 200, patched.text);
    for (const node of [b, c]) {
      const read = await node.request('POST', '/v1/device/query', { token: node.adminToken, body: {} });
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.device.map((d: { id: number; properties: unknown }) => [d.id, d.properties]), [[id, { nodeId: 'n1', owner: 'second' }]]);
    }
  });

  it('30 PATCHes with one If-Unmodified-Since spread over three nodes: exactly one wins, the others get 412', async (t) => {
    const nodes = await threeNodes(t);
    const [a] = nodes;
    const created = await a.request('POST', '/v1/device?roleId=1', { token: a.adminToken, body: { properties: { owner: 'nobody' } } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.device.id;
    a.clock.advance(60_000);
    const header = { 'if-unmodified-since': iso(T0) };
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 3].request('PATCH', `/v1/device/${id}`,
      { token: nodes[i % 3].adminToken, body: [{ op: 'replace', path: '/owner', value: `client-${i}` }], headers: header })));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 412).length, 29, JSON.stringify(statuses));
    const winner = results.find((r) => r.status === 200)!;
    const read = await nodes[2].request('POST', '/v1/device/query', { token: nodes[2].adminToken, body: {} });
    assert.deepEqual(read.body.device[0].properties, winner.body.device.properties);
  });

  it('two manages relations that close a cycle, sent at once to two nodes, 20 times each: one direction stored, the other 409', async (t) => {
    const [a, b] = await threeNodes(t);
    const [x] = await addChild(a, ROOT_ROLE_ID, ALL);
    const [y] = await addChild(a, ROOT_ROLE_ID, ALL);
    const put = (node: TestApp, parent: number, child: number) => node.request('PUT', `/v1/role/${parent}/manages?childRoleId=${child}`, { token: node.adminToken, body: FLAGS_ALL });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? put(a, x, y) : put(b, y, x))));
    const winner = results.findIndex((r) => r.status === 200) % 2;
    results.forEach((r, i) => {
      if (i % 2 === winner) assert.equal(r.status, 200, r.text);
      else assertError(r, 409, 'ROLE_CYCLE');
    });
    const stored = await a.deps.db.all(sql<{ p: number; c: number }>`SELECT parent_role_id AS p, child_role_id AS c FROM manages WHERE parent_role_id IN (${x}, ${y}) AND child_role_id IN (${x}, ${y})`);
    assert.deepEqual(stored, [winner === 0 ? { p: x, c: y } : { p: y, c: x }]);
  });

  it('license activation and claim raced over three nodes: exactly one of each, one link', async (t) => {
    const nodes = await threeNodes(t);
    const [a] = nodes;
    const license = await createLicense(a);
    const activations = await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 3].request('POST', '/v1/license/activate', {
      token: nodes[i % 3].adminToken, body: { key: license.key },
    })));
    assert.equal(activations.filter((r) => r.status === 200).length, 1, JSON.stringify(statuses(activations)));
    for (const r of activations.filter((x) => x.status !== 200)) assertError(r, 400, 'ALREADY_ACTIVATED');
    const controllers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await addDevice(a, { nodeId: `ctrl-${i}`, nodeType: 'smartgridController' });
      await addMonitors(a, ROOT_ROLE_ID, id, { mm: true });
      controllers.push(`ctrl-${i}`);
    }
    const other = await createLicense(a);
    const claims = await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 3].request('POST', '/v1/license/claim', {
      token: nodes[i % 3].adminToken, body: { licenseKey: other.key, nodeId: controllers[Math.floor(i / 3) % 3] },
    })));
    assert.equal(claims.filter((r) => r.status === 200).length, 1, JSON.stringify(statuses(claims)));
    for (const r of claims.filter((x) => x.status !== 200)) assertError(r, 400, 'ALREADY_CLAIMED');
    assert.equal((await datalinks(a)).length, 1);
  });

  it('failed passwords spread over three nodes add up: the 6th attempt is refused on every node, with the same wait', async (t) => {
    const nodes = await threeNodes(t);
    for (let i = 0; i < 5; i++) assertError(await login(nodes[i % 3], ADMIN_EMAIL, `wrong-${i}`), 401, 'PASSWORD_INCORRECT');
    for (const node of nodes) {
      const body = assertError(await login(node, ADMIN_EMAIL, ADMIN_PASSWORD), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
      assert.equal(body.retryAfter, 900);
    }
  });

  it('a TOTP code accepted on one node is refused on the others (no replay across nodes)', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const { secret } = await enableTotp(a, a.adminToken);
    const partial = async (node: TestApp) => {
      const r = await login(node, ADMIN_EMAIL, ADMIN_PASSWORD);
      assert.equal(r.status, 401, r.text);
      return r.body.partialAuthToken as string;
    };
    const code = totpCode(a, secret);
    const first = await b.request('POST', '/user/2fa/totp/authenticate', { token: await partial(b), body: { totp: code } });
    assert.equal(first.status, 200, first.text);
    for (const node of [a, c]) {
      assertError(await node.request('POST', '/user/2fa/totp/authenticate', { token: await partial(node), body: { totp: code } }), 401, 'TOTP_INCORRECT');
    }
  });

  it('keys rotate: nodes that loaded the old key verify tokens of the new one at once and sign with it; old tokens stay valid', async (t) => {
    const [a, b] = await threeNodes(t);
    const before = await a.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(before.status, 200, before.text);
    const oldKid = kidOf(before.text);
    // what `gridkeeper keys rotate` does, from another process
    const newKid = await rotateSigningKey(a.deps.db, a.clock.now());
    // a node started after the rotation signs with the new key; the running ones verify its tokens at once
    const late = await a.anotherNode();
    t.after(() => late.close());
    const fresh = await late.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(kidOf(fresh.text), newKid);
    const access = await b.request('GET', '/auth/accesstoken', { token: fresh.text });
    assert.equal(access.status, 200, access.text);
    // ... and B, having met the new key, signs with it from now on
    assert.equal(kidOf(access.text), newKid);
    // A has not met it: within KEY_CHECK_MS it asks the database, then signs with the new key
    a.clock.advance(5_000);
    const fromA = await a.request('GET', '/auth/accesstoken', { token: before.text });
    assert.equal(fromA.status, 200, fromA.text);
    assert.equal(kidOf(fromA.text), newKid);
    // the token signed before the rotation is valid on every node
    for (const node of [a, b, late]) assert.equal((await node.request('GET', '/auth/refreshtoken/validate', { token: before.text })).status, 200);
    assert.notEqual(oldKid, newKid);
  });

  it('what one node writes is read on another at once: a role and its rights, telemetry, a member', async (t) => {
    const [a, b] = await threeNodes(t);
    const [role] = await addChild(a, ROOT_ROLE_ID, ALL);
    const user = await a.createUser('reader@nodes.test');
    const device = await addDevice(a, { nodeId: 'meter-1' });
    await addMonitors(a, ROOT_ROLE_ID, device, { mm: true });
    assert.equal((await b.request('POST', '/v1/device/query', { token: user.token, body: {} })).body.device.length, 0);
    // A: the user joins a role that monitors the device; B answers with the new rights at once
    const member = await a.request('PUT', `/v1/role/${role}/member?userEmail=reader%40nodes.test`, { token: a.adminToken, body: {} });
    assert.equal(member.status, 200, member.text);
    const monitors = await a.request('PUT', `/v1/role/${role}/monitors?deviceId=${device}`, { token: a.adminToken, body: { monitorManagement: true, reads: [], edits: [] } });
    assert.equal(monitors.status, 200, monitors.text);
    const seen = await b.request('POST', '/v1/device/query', { token: user.token, body: {} });
    assert.deepEqual(seen.body.device.map((d: { id: number }) => d.id), [device]);
    // telemetry written on B (a new namespace, series and shard) is queried on A at once, and the reverse
    const write = (node: TestApp, ts: number, v: number) => node.request('POST', '/v1/telemetry?db=site&rp=autogen&precision=ms', {
      token: user.token, raw: `power,nodeId=meter-1 v=${v} ${ts}`, headers: { 'content-type': 'text/plain' },
    });
    const query = (node: TestApp) => node.request('POST', '/v1/telemetry/query', { token: user.token, body: {
      select: ['v'], from: { measurement: 'power', database: 'site', retentionPolicy: 'autogen' },
      where: { tags: { nodeId: 'meter-1' }, time: [{ operator: '>=', value: T0 - 60_000 }, { operator: '<', value: T0 + 60_000 }] },
    } });
    assert.equal((await write(b, T0, 1)).status, 204);
    assert.deepEqual((await query(a)).body.series?.[0].values, [[iso(T0), 1]]);
    assert.equal((await write(a, T0 + 1000, 2)).status, 204);
    assert.deepEqual((await query(b)).body.series?.[0].values, [[iso(T0), 1], [iso(T0 + 1000), 2]]);
    // B removes the member: A refuses the device at once
    const removed = await b.request('DELETE', `/v1/role/${role}/member/${member.body.member.id}`, { token: b.adminToken });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await a.request('POST', '/v1/device/query', { token: user.token, body: {} })).body.device.length, 0);
  });

  it('readable sets kept by each node follow a change of rights made on another node, page by page and by skipHash', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const [role] = await addChild(a, ROOT_ROLE_ID, ALL);
    const user = await a.createUser('pager@nodes.test');
    assert.equal((await a.request('PUT', `/v1/role/${role}/member?userEmail=pager%40nodes.test`, { token: a.adminToken, body: {} })).status, 200);
    const devices: number[] = [];
    for (let i = 0; i < 4; i++) {
      devices.push(await addDevice(a, { n: i }));
      await addMonitors(a, ROOT_ROLE_ID, devices[i], { mm: true });
      await addMonitors(a, role, devices[i], { reads: ['n'] });
    }
    const page = async (node: TestApp, body: object) => {
      const res = await node.request('POST', '/v1/device/query', { token: user.token, body });
      assert.equal(res.status, res.status === 204 ? 204 : 200, res.text);
      return res.status === 204 ? 'unchanged' : res.body.device.map((d: { id: number }) => d.id);
    };
    // every node answers (and so keeps) the user's set, and a skipHash poll of it
    const full = await a.request('POST', '/v1/device/query', { token: user.token, body: {} });
    const hash = createHash('sha256').update(full.body.device.map((d: { lastUpdate: string }) => d.lastUpdate).join('\n')).digest('base64');
    for (const node of [a, b, c]) {
      assert.deepEqual(await page(node, { limit: 2 }), devices.slice(0, 2));
      assert.equal(await page(node, { skipHash: hash }), 'unchanged');
    }
    // C takes the third device away from the role (its monitors relation) and grants a fifth
    const third = (await c.deps.db.get(sql<{ id: number }>`SELECT id FROM monitors WHERE role_id = ${role} AND device_id = ${devices[2]}`))!;
    assert.equal((await c.request('DELETE', `/v1/role/${role}/monitors/${third.id}`, { token: c.adminToken })).status, 200);
    const fifth = await addDevice(c, { n: 5 }, T0 + 9); // (the hash covers lastUpdate strings only)
    await addMonitors(c, ROOT_ROLE_ID, fifth, { mm: true });
    const granted = await c.request('PUT', `/v1/role/${role}/monitors?deviceId=${fifth}`, { token: c.adminToken, body: { monitorManagement: false, reads: ['n'], edits: [] } });
    assert.equal(granted.status, 200, granted.text);
    for (const node of [a, b]) {
      assert.deepEqual(await page(node, { limit: 2, afterId: devices[1] }), [devices[3], fifth]);
      assert.deepEqual(await page(node, { skipHash: hash }), [devices[0], devices[1], devices[3], fifth]);
    }
  });

  it('a node cut off from the database answers 503 DATABASE_UNAVAILABLE, stores nothing, and recovers by itself', async (t) => {
    const a = await makeTestApp();
    t.after(() => a.close());
    const server = new URL(TEST_SERVER_URL);
    const proxy = await tcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    t.after(() => proxy.close());
    const p = await a.anotherNode({ via: (url) => { const u = new URL(url); u.host = `127.0.0.1:${proxy.port}`; return u.toString(); } });
    t.after(() => p.close());
    const device = await addDevice(a, { nodeId: 'n1', owner: 'first' });
    await addMonitors(a, ROOT_ROLE_ID, device, { mm: true });
    assert.deepEqual((await p.request('GET', '/healthz')).body.database, 'reachable');
    const patch = () => p.request('PATCH', `/v1/device/${device}`, { token: p.adminToken, body: [{ op: 'replace', path: '/owner', value: 'second' }] });

    await proxy.cut();
    const health = assertError(await p.request('GET', '/healthz'), 503, 'DATABASE_UNAVAILABLE');
    assert.equal(health.backend, 'postgres');
    assert.equal(health.database, 'unreachable');
    assert.equal(health.retryAfter, 2);
    const refused = await patch();
    assertError(refused, 503, 'DATABASE_UNAVAILABLE');
    assert.equal(refused.headers.get('retry-after'), '2');
    assert.doesNotMatch(refused.text, /127\.0\.0\.1|ECONN|postgres:/, 'the driver\'s text is not shown');
    assertError(await p.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } }), 503, 'DATABASE_UNAVAILABLE');
    assertError(await p.request('POST', '/v1/telemetry?db=site&rp=autogen', { token: p.adminToken, raw: 'power,nodeId=n1 v=1', headers: { 'content-type': 'text/plain' } }), 503, 'DATABASE_UNAVAILABLE');
    const influx = await p.request('POST', '/write?db=site', { token: p.adminToken, raw: 'power,nodeId=n1 v=1' });
    assert.equal(influx.status, 503);
    assert.match(influx.body.error, /database cannot be reached/);
    const metrics = (await p.request('GET', '/metrics')).text;
    assert.match(metrics, /gridkeeper_database_unavailable_total [1-9]/);
    assert.match(metrics, /gridkeeper_database_pool_size 4/);
    assert.deepEqual((await storedDevice(a, device))!.properties, { nodeId: 'n1', owner: 'first' }, 'nothing of the refused PATCH stored');

    await proxy.restore();
    assert.equal((await p.request('GET', '/healthz')).status, 200);
    const done = await patch();
    assert.equal(done.status, 200, done.text);
    assert.deepEqual((await storedDevice(a, device))!.properties, { nodeId: 'n1', owner: 'second' });
  });

  it('a node whose sealing key differs from the installation\'s refuses to start, naming the setting; the same key starts', async (t) => {
    const a = await makeTestApp();
    t.after(() => a.close());
    const other = randomBytes(32).toString('base64');
    await assert.rejects(a.anotherNode({ env: { GRIDKEEPER_SECRET_KEY: other } }), (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, /^GRIDKEEPER_SECRET_KEY .*this node's sealing key does not open the secrets of the installation .*give every node the same GRIDKEEPER_SECRET_KEY$/);
      return true;
    });
    // rotation on a running installation: the new key first, the old one still listed, seals the check value again
    const current = (await a.deps.db.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'sealing_check'`))!.value;
    const rotated = await a.anotherNode({ env: { GRIDKEEPER_SECRET_KEY: `${other},${a.deps.config.secretKey}` } });
    t.after(() => rotated.close());
    const after = (await a.deps.db.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'sealing_check'`))!.value;
    assert.notEqual(after, current);
    assert.equal(after.split('.')[1], rotated.deps.secrets.currentKeyId);
    const fresh = await a.anotherNode({ env: { GRIDKEEPER_SECRET_KEY: other } });
    await fresh.close();
  });

  it('wrong join passwords spread over three nodes add up: the next attempt waits on every node', async (t) => {
    const nodes = await threeNodes(t, { env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    const [a] = nodes;
    const [p] = await addChild(a, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const guesser = await userIn(a, p);
    const hidden = await addRole(a, 'hidden', NONE, await hashSecret('correct-horse-1'));
    const join = async (node: TestApp, password: string) => node.request('PUT',
      `/v1/role/${p}/manages?childRoleId=${hidden}&childRolePassword=${encodeURIComponent(password)}`,
      { token: await node.token(guesser.id), body: NONE, headers: { 'x-forwarded-for': '203.0.113.7' } });
    for (let i = 0; i < FREE_PER_ADDRESS; i++) assertError(await join(nodes[i % 3], `wrong-${i}-xxxxxx`), 403, 'ROLE_PASSWORD_INCORRECT');
    for (const node of nodes) assert.equal(assertError(await join(node, 'correct-horse-1'), 429, 'TOO_MANY_PASSWORD_CHECKS').retryAfter, 1);
  });
});
