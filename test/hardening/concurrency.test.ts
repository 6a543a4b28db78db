// Concurrency against the real executable: CLIENTS (default 50) users, each on its own connection, hammer the same
// devices, roles and licenses at once — while `gridkeeper backup` runs again and again in another process. Proven:
// no lost update (every client's own property is there; a compare-and-set counter counts every success), no duplicate
// (one manages relation, one membership, one user, one license link, one device per nodeId, one monitors relation),
// no deadlock (every request answered within its timeout), and never a 5xx or a SQLite error reaching a client.
// On PostgreSQL the same, with `gridkeeper backup` being pg_dump (each archive restored into a fresh database and
// checked).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient, type HttpResult } from '../support/http-client.ts';
import { sql } from 'kysely';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, BACKEND, assertIntact, databaseEnv, dropDatabases, envInt, loginOver, openBackup, openCheckDb, sleep,
  startGridkeeper,
} from '../support/harness.ts';
import { FLAGS_ALL } from './write-load.ts';

const CLIENTS = envInt('CLIENTS', 50);
// Each increment of the counter races all the clients again (~50 attempts per success): two each on SQLite, one each
// on PostgreSQL, whose every attempt is a SERIALIZABLE transaction on a server sharing the cores (28 s for two).
const INCREMENTS = envInt('INCREMENTS', BACKEND === 'postgres' ? 1 : 2);

interface Client { http: HttpClient; token: string; email: string; index: number }

let dir: string;
let exe: string;
let run: RunningBinary;
let admin: HttpClient;
let adminToken: string;
let clients: Client[];
let hub: number;
const statuses = new Map<number, number>();
const failures: string[] = [];
const backups = { runs: 0, ok: 0, errors: [] as string[] };
let backupLoop: Promise<void> | undefined;
let stopBackups = false;

/** Every answer of the suite goes through here: counted, and a 5xx, an unanswered request or a SQLite message is a failure. */
function seen(r: HttpResult, what: string): HttpResult {
  statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  if (r.status === 0 || r.status >= 500) failures.push(`${what}: ${r.status} ${r.error ?? ''} ${r.text.slice(0, 200)}`);
  if (/SQLITE|database is locked|busy/i.test(r.text)) failures.push(`${what}: database error leaked: ${r.text.slice(0, 200)}`);
  return r;
}

async function as(c: Client | 'admin', method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult> {
  const http = c === 'admin' ? admin : c.http;
  const token = c === 'admin' ? adminToken : c.token;
  return seen(await http.request(method, path, { token, body, headers, timeoutMs: 60_000 }), `${method} ${path}`);
}

function expect200(r: HttpResult, what: string): any {
  assert.equal(r.status, 200, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

const all = <T>(f: (c: Client) => Promise<T>) => Promise.all(clients.map(f));
const count = (rs: HttpResult[], status: number) => rs.filter((r) => r.status === status).length;

/** `gridkeeper backup` in a loop, in another process, until told to stop; each copy must pass integrity_check. */
async function backupsUntilStopped(dataDir: string): Promise<void> {
  // PostgreSQL: the command needs the database's URL; SQLite: the environment as it always was
  const env = BACKEND === 'postgres' ? { env: { ...process.env, ...await databaseEnv(dataDir) } } : {};
  while (!stopBackups) {
    const file = join(dir, `backup-${backups.runs++}.db`);
    const code = await new Promise<string | null>((resolve) => {
      execFile(exe, ['backup', file, '--data-dir', dataDir], { timeout: 60_000, ...env }, (err, _out, stderr) => resolve(err ? `${err.message} ${stderr}` : null));
    });
    if (code !== null) backups.errors.push(code);
    else if (existsSync(file)) {
      try {
        const copy = await openBackup(file);
        try { await assertIntact(copy.db, file); backups.ok++; } finally { await copy.drop(); }
      } catch (err) { backups.errors.push(String(err)); }
    }
    rmSync(file, { force: true });
    await sleep(20);
  }
}

before(async () => {
  ({ dir, exe } = isolatedBinary());
  const dataDir = join(dir, 'data');
  run = await startGridkeeper(exe, dataDir);
  admin = httpClient(run.url, { maxSockets: 8 });
  adminToken = (await loginOver(admin, ADMIN_EMAIL, ADMIN_PASSWORD)).access;
  hub = expect200(await as('admin', 'POST', '/v1/role?parentRoleId=1', { manages: FLAGS_ALL, role: { name: 'hub', selfRights: FLAGS_ALL } }), 'hub role').role.id;
  // Bulk for the backups to copy while the clients write: ~60,000 telemetry points.
  const bulk = expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: 'bulk', nodeType: 'powerMeter' } }), 'bulk device');
  void bulk;
  const t0 = Date.now() - 86_400_000;
  for (let b = 0; b < 6; b++) {
    const lines = Array.from({ length: 10_000 }, (_, i) => `bulk,nodeId=bulk,phase=${i % 3} p=${i}.5,q=${b}i ${t0 + b * 10_000 + i}`).join('\n');
    const r = await admin.request('POST', '/v1/telemetry?db=bulk&rp=autogen&precision=ms', { token: adminToken, raw: lines, headers: { 'content-type': 'text/plain' } });
    assert.equal(r.status, 204, r.text);
  }
  // CLIENTS users, members of the hub role (all rights there), each logged in on its own connection.
  const emails = Array.from({ length: CLIENTS }, (_, i) => `client-${i}@concurrency.test`);
  for (let i = 0; i < emails.length; i += 8) {
    await Promise.all(emails.slice(i, i + 8).map(async (email) => expect200(
      await as('admin', 'PUT', `/v1/role/${hub}/member?userEmail=${encodeURIComponent(email)}&password=client-password-1`, {}), 'add client')));
  }
  // all of them log in at once, from one address (more than the per-IP throttle's 20 in flight)
  const together = emails.length;
  clients = [];
  for (let i = 0; i < emails.length; i += together) {
    clients.push(...await Promise.all(emails.slice(i, i + together).map(async (email, j) => {
      const http = httpClient(run.url, { maxSockets: 1 });
      const s = await loginOver(http, email, 'client-password-1');
      return { http, token: s.access, email, index: i + j };
    })));
  }
  backupLoop = backupsUntilStopped(dataDir);
});

after(async () => {
  stopBackups = true;
  await backupLoop;
  for (const c of clients ?? []) c.http.close();
  admin?.close();
  try {
    if (run) {
      assert.equal(await run.stop('SIGTERM'), 0);
      const db = await openCheckDb(join(dir, 'data'));
      try { await assertIntact(db, 'after the concurrency suite'); } finally { await db.close(); }
    }
  } finally {
    await dropDatabases();
  }
  rmSync(dir, { recursive: true, force: true });
  const fiveHundreds = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  const requests = [...statuses.values()].reduce((a, b) => a + b, 0);
  console.log(`concurrency: ${CLIENTS} clients, ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, `
    + `5xx ${fiveHundreds}; backups ${backups.ok}/${backups.runs} ok`);
  assert.deepEqual(failures.slice(0, 10), [], `${failures.length} failed requests`);
  assert.deepEqual(backups.errors, [], 'every concurrent backup succeeded and passed integrity_check');
  assert.ok(backups.ok >= 1, 'at least one backup ran during the load');
});

describe(`${CLIENTS} concurrent clients against the executable, with backups running`, () => {
  it('each client appends its own properties to the same devices (PATCH and PUT merge): none lost', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: `shared-${i}`, nodeType: 'battery' } }), 'device').device.id);
    }
    const rounds = 4;
    for (let round = 0; round < rounds; round++) {
      const rs = await all((c) => round % 2 === 0
        ? as(c, 'PATCH', `/v1/device/${ids.join(',')}`, [{ op: 'add', path: `/c${c.index}r${round}`, value: c.index }])
        : as(c, 'PUT', `/v1/device/${ids[c.index % ids.length]}?mode=merge`, { properties: { [`c${c.index}r${round}`]: c.index } }));
      assert.equal(count(rs, 200), CLIENTS, JSON.stringify(rs.filter((r) => r.status !== 200).map((r) => r.text).slice(0, 3)));
    }
    const devices = expect200(await as('admin', 'POST', '/v1/device/query', { filter: { id: ids } }), 'read back').device as { id: number; properties: Record<string, unknown> }[];
    for (const c of clients) {
      for (let round = 0; round < rounds; round++) {
        const targets = round % 2 === 0 ? ids : [ids[c.index % ids.length]];
        for (const d of devices) {
          assert.equal(d.properties[`c${c.index}r${round}`], targets.includes(d.id) ? c.index : undefined, `device ${d.id} c${c.index}r${round}`);
        }
      }
    }
  });

  it(`a compare-and-set counter (JSON Patch test + replace): ${CLIENTS} x ${INCREMENTS} increments, every success counted once`, async () => {
    const id = expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: 'counter', counter: 0 } }), 'device').device.id;
    let successes = 0;
    let conflicts = 0;
    await all(async (c) => {
      for (let done = 0, attempts = 0; done < INCREMENTS; attempts++) {
        assert.ok(attempts < 2000, `client ${c.index} starved`);
        const read = await as(c, 'POST', '/v1/device/query', { filter: { id: [id] } });
        const n = expect200(read, 'read counter').device[0].properties.counter as number;
        const r = await as(c, 'PATCH', `/v1/device/${id}`, [{ op: 'test', path: '/counter', value: n }, { op: 'replace', path: '/counter', value: n + 1 }]);
        if (r.status === 200) { done++; successes++; } else {
          assert.equal(r.status, 422, r.text);
          assert.equal(r.body.code, 'PATCH_FAILED');
          conflicts++;
        }
      }
    });
    const final = expect200(await as('admin', 'POST', '/v1/device/query', { filter: { id: [id] } }), 'final').device[0].properties.counter;
    assert.equal(successes, CLIENTS * INCREMENTS);
    assert.equal(final, successes, `counter ${final} after ${successes} successful increments (${conflicts} lost races retried)`);
  });

  it('If-Unmodified-Since: of all clients racing on one version, exactly one wins', async () => {
    const created = expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { owner: 'none' } }), 'device').device;
    const rs = await all((c) => as(c, 'PATCH', `/v1/device/${created.id}`, [{ op: 'replace', path: '/owner', value: c.email }],
      { 'if-unmodified-since': created.lastUpdate }));
    assert.equal(count(rs, 200), 1);
    assert.equal(count(rs, 412), CLIENTS - 1);
    const winner = rs.find((r) => r.status === 200)!.body.device.properties.owner;
    const stored = expect200(await as('admin', 'POST', '/v1/device/query', { filter: { id: [created.id] } }), 'read').device[0];
    assert.equal(stored.properties.owner, winner);
  });

  it('the same new nodeId created by every client: one device, the others 409 NODE_ID_TAKEN', async () => {
    const rs = await all((c) => as(c, 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: 'contested', by: c.index } }));
    assert.equal(count(rs, 200), 1);
    assert.equal(rs.filter((r) => r.status === 409 && r.body.code === 'NODE_ID_TAKEN').length, CLIENTS - 1);
    const found = expect200(await as('admin', 'POST', '/v1/device/query', { filter: { nodeId: ['contested'] } }), 'query').device;
    assert.equal(found.length, 1);
  });

  it('PUT manages of the same pair by every client: one relation, the same id in every answer', async () => {
    const x = expect200(await as('admin', 'POST', `/v1/role?parentRoleId=${hub}`, { manages: FLAGS_ALL, role: { name: 'x', selfRights: FLAGS_ALL } }), 'x').role.id;
    const y = expect200(await as('admin', 'POST', `/v1/role?parentRoleId=${hub}`, { manages: FLAGS_ALL, role: { name: 'y', selfRights: FLAGS_ALL } }), 'y').role.id;
    const rs = await all((c) => as(c, 'PUT', `/v1/role/${x}/manages?childRoleId=${y}`, { ...FLAGS_ALL, alarmManagement: c.index % 2 === 0 }));
    assert.equal(count(rs, 200), CLIENTS, rs.map((r) => r.text).find((t) => !t.includes('"manages"')));
    assert.equal(new Set(rs.map((r) => r.body.manages.id)).size, 1);
    const rel = expect200(await as('admin', 'POST', `/v1/role/${x}/manages/query`, { filter: { childRoleId: [y] } }), 'query').manages;
    assert.equal(rel.length, 1);
    // ... and the reverse edge, raced against itself, is refused as a cycle every time
    const back = await all((c) => as(c, 'PUT', `/v1/role/${y}/manages?childRoleId=${x}`, FLAGS_ALL));
    assert.equal(back.filter((r) => r.status === 409 && r.body.code === 'ROLE_CYCLE').length, CLIENTS);
  });

  it('member upserts of one existing user and of one brand-new user: one membership each, one user', async () => {
    const role = expect200(await as('admin', 'POST', `/v1/role?parentRoleId=${hub}`, { manages: FLAGS_ALL, role: { name: 'club', selfRights: FLAGS_ALL } }), 'club').role.id;
    const existing = await all((c) => as(c, 'PUT', `/v1/role/${role}/member?userEmail=${encodeURIComponent(clients[0].email)}`, {}));
    assert.equal(count(existing, 200), CLIENTS);
    assert.equal(new Set(existing.map((r) => r.body.member.id)).size, 1);
    // a new user: every racing client hashes a password, then one insert wins and every answer names that one user.
    // Twelve race: a hash costs ~0.2 s of CPU on purpose, and fifty of them only made the race longer, not closer.
    const racers = clients.slice(0, 12);
    const fresh = await Promise.all(racers.map((c) => as(c, 'PUT', `/v1/role/${role}/member?userEmail=Newcomer@Concurrency.test&password=newcomer-pass-${c.index}`, {})));
    assert.equal(count(fresh, 200), racers.length, fresh.find((r) => r.status !== 200)?.text);
    assert.equal(new Set(fresh.map((r) => r.body.member.id)).size, 1);
    const members = expect200(await as('admin', 'POST', `/v1/role/${role}/member/query`, {}), 'members').member as { userEmail: string }[];
    assert.equal(members.length, 2);
    // exactly one of the passwords works: the user was created once
    const logins = await Promise.all([0, 1, 2, 3].map((i) => admin.request('POST', '/auth/login', { body: { username: 'newcomer@concurrency.test', password: `newcomer-pass-${i}` } })));
    assert.ok(logins.filter((r) => r.status === 200).length <= 1);
    const db = await openCheckDb(join(dir, 'data'));
    try {
      // the address as the first racer wrote it, once, whatever the case of its letters
      assert.equal((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM users WHERE lower(email) = 'newcomer@concurrency.test'`))!.n, 1);
    } finally { await db.close(); }
  });

  it('monitors upserts of the same (role, device) pair: one relation', async () => {
    const role = expect200(await as('admin', 'POST', `/v1/role?parentRoleId=${hub}`, { manages: FLAGS_ALL, role: { name: 'watchers', selfRights: FLAGS_ALL } }), 'watchers').role.id;
    const device = expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: 'watched' } }), 'device').device.id;
    const rs = await all((c) => as(c, 'PUT', `/v1/role/${role}/monitors?deviceId=${device}`, { monitorManagement: false, reads: [`r${c.index}`], edits: [] }));
    assert.equal(count(rs, 200), CLIENTS, rs.find((r) => r.status !== 200)?.text);
    assert.equal(new Set(rs.map((r) => r.body.monitors.id)).size, 1);
    const rel = expect200(await as('admin', 'POST', `/v1/role/${role}/monitors/query`, { filter: { deviceId: [device] } }), 'query').monitors;
    assert.equal(rel.length, 1);
  });

  it('license activations and claims of the same key: one winner each, one link', async () => {
    const controllers: string[] = [];
    for (let i = 0; i < 5; i++) {
      controllers.push(expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: `ctrl-${i}`, nodeType: 'smartgridController' } }), 'controller').device.properties.nodeId);
    }
    const keys = (expect200(await as('admin', 'POST', '/v1/license', { type: 'commercial', duration: 30, count: 10 }), 'licenses').licenses as { key: string }[]).map((l) => l.key);
    for (const key of keys.slice(0, 5)) {
      const rs = await all((c) => as(c, 'POST', '/v1/license/activate', { key }));
      assert.equal(count(rs, 200), 1);
      assert.equal(rs.filter((r) => r.status === 400 && r.body.code === 'ALREADY_ACTIVATED').length, CLIENTS - 1);
    }
    for (const key of keys.slice(5)) {
      const rs = await all((c) => as(c, 'POST', '/v1/license/claim', { licenseKey: key, nodeId: controllers[c.index % controllers.length] }));
      assert.equal(count(rs, 200), 1, rs.map((r) => r.status).join());
      assert.equal(rs.filter((r) => r.status === 400 && r.body.code === 'ALREADY_CLAIMED').length, CLIENTS - 1);
    }
    const linked = (await Promise.all(controllers.map((n) => as('admin', 'GET', `/v1/license/controller/${n}`))))
      .flatMap((r) => expect200(r, 'controller licenses').licenses as { key: string }[]).map((l) => l.key).sort();
    assert.deepEqual(linked, keys.slice(5).sort());
  });

  it('churn: roles with devices created and cascade-deleted while others patch and query them; no deadlock, no 5xx', async () => {
    const deadline = Date.now() + 8_000;
    const churners = clients.slice(0, Math.ceil(CLIENTS / 5));
    const readers = clients.slice(churners.length);
    const shared = expect200(await as('admin', 'POST', `/v1/device?roleId=${hub}`, { properties: { nodeId: 'churn-shared' } }), 'device').device.id;
    let cycles = 0;
    await Promise.all([
      ...churners.map(async (c) => {
        for (let i = 0; i < 4 && Date.now() < deadline; i++) {
          const made = expect200(await as(c, 'POST', `/v1/role?parentRoleId=${hub}`, { manages: FLAGS_ALL, role: { name: `churn-${c.index}-${i}`, selfRights: FLAGS_ALL } }), 'churn role');
          const role = made.role.id;
          const dev = expect200(await as(c, 'POST', `/v1/device?roleId=${role}`, { properties: { nodeId: `churn-${c.index}-${i}` } }), 'churn device').device.id;
          await as(c, 'PUT', `/v1/role/${role}/monitors?deviceId=${shared}`, { monitorManagement: false, reads: ['nodeId'], edits: [] });
          await as(c, 'PATCH', `/v1/device/${dev}`, [{ op: 'add', path: '/x', value: i }]);
          const del = await as(c, 'DELETE', `/v1/role/${hub}/manages/${made.manages.id}`);
          expect200(del, 'cascade delete');
          assert.ok(del.body.deletedNodeIds.includes(dev), 'the device went with its role');
          cycles++;
        }
      }),
      ...readers.map(async (c) => {
        while (Date.now() < deadline && cycles < churners.length * 4) {
          const q = await as(c, 'POST', '/v1/device/query', { filter: { id: [shared] } });
          assert.equal(q.status, 200);
          await as(c, 'POST', '/v1/role/*/monitors/query', { filter: { deviceId: [shared] } });
          await as(c, 'PATCH', `/v1/device/${shared}`, [{ op: 'add', path: `/r${c.index}`, value: Date.now() }]);
        }
      }),
    ]);
    assert.ok(cycles > 0);
    const left = expect200(await as('admin', 'POST', '/v1/role/*/monitors/query', { filter: { deviceId: [shared] } }), 'monitors').monitors;
    assert.equal(left.length, 1, 'only the hub relation is left on the shared device');
  });
});
