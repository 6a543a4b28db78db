// GET /v1/access/explain: the verdict and the shortest granting chain. Hand-made graphs pin the shapes; random
// installations check that the verdict always equals the rights engine's and that every chain is valid and shortest
// (against a layered search written separately here).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { NONE, flags, addRole, addChild, addManages, addDevice, addMonitors, userIn } from '../roles/fixtures.ts';
import { explainDeviceAccess, explainRoleRight, type Explanation } from '../../src/access/explain.ts';
import { RIGHTS, RIGHT_COLUMN, canEditProperty, canReadProperty, deviceAccess, hasRight, memberRoles, reaches, type Right, type RightMode } from '../../src/access/rights.ts';
import { randomInstallation, mulberry32, PROPERTY_ALPHABET, type RandomInstallation } from '../support/random-installation.ts';
import { loadInstallation } from '../support/load-installation.ts';
import type { Db } from '../../src/db/open.ts';
import { testBackend } from '../support/postgres.ts';

const explain = (t: TestApp, token: string, q: string) => t.request('GET', `/v1/access/explain?${q}`, { token });
const mem = (id: number, roleId: number, userEmail: string) => ({ kind: 'member', id, roleId, userEmail });
const man = (id: number, parentRoleId: number, childRoleId: number, f = NONE) => ({ kind: 'manages', id, parentRoleId, childRoleId, ...f });

describe('explain a right over a role', () => {
  test('the shortest of several granting chains, from the member relation down to the target', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await addRole(app, 'a');
    const [b, ab] = await addChild(app, a, flags('deviceManagement'));
    const [c, bc] = await addChild(app, b);
    const target = await addRole(app, 'target');
    await addManages(app, c, target); // long: a -(X)-> b -> c -> target
    const [d, ad] = await addChild(app, a);
    const dt = await addManages(app, d, target, flags('deviceManagement')); // short: a -> d -(X)-> target
    const u = await userIn(app, a);
    const res = await explain(app, u.token, `roleId=${target}&right=deviceManagement`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      allowed: true, grantedBy: 'manages',
      via: [mem(u.memberIds[0], a, u.email), man(ad, a, d), man(dt, d, target, flags('deviceManagement'))],
    });
    // mode=indirect the same; a role in between is reached with the flag crossed on the first relation
    const mid = await explain(app, u.token, `roleId=${c}&right=deviceManagement&mode=indirect`);
    assert.deepEqual(mid.body, {
      allowed: true, grantedBy: 'manages',
      via: [mem(u.memberIds[0], a, u.email), man(ab, a, b, flags('deviceManagement')), man(bc, b, c)],
    });
  });

  test('selfRights grant the role itself only (direct); direct and indirect modes differ', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await addRole(app, 'a', flags('alarmManagement'));
    const [b, ab] = await addChild(app, a, flags('reportManagement'));
    const [c] = await addChild(app, b);
    const u = await userIn(app, a);
    assert.deepEqual((await explain(app, u.token, `roleId=${a}&right=alarmManagement`)).body,
      { allowed: true, grantedBy: 'selfRights', via: [mem(u.memberIds[0], a, u.email)] });
    assert.deepEqual((await explain(app, u.token, `roleId=${a}&right=alarmManagement&mode=indirect`)).body, { allowed: false, via: [] });
    assert.deepEqual((await explain(app, u.token, `roleId=${b}&right=alarmManagement`)).body, { allowed: false, via: [] });
    // a -(report)-> b: direct and indirect over b; only indirect over c
    const direct = await explain(app, u.token, `roleId=${b}&right=reportManagement&mode=direct`);
    assert.deepEqual(direct.body, { allowed: true, grantedBy: 'manages', via: [mem(u.memberIds[0], a, u.email), man(ab, a, b, flags('reportManagement'))] });
    assert.deepEqual((await explain(app, u.token, `roleId=${c}&right=reportManagement&mode=direct`)).body, { allowed: false, via: [] });
    assert.equal((await explain(app, u.token, `roleId=${c}&right=reportManagement&mode=indirect`)).body.allowed, true);
  });

  test('a role outside reach (or unknown) is 404; validation names the parameter', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const hidden = await addRole(app);
    const u = await userIn(app, await addRole(app));
    assert.equal(assertError(await explain(app, u.token, `roleId=${hidden}&right=roleManagement`), 404, 'NOT_FOUND').message, `role ${hidden} not found`);
    assertError(await explain(app, u.token, 'roleId=4242&right=roleManagement'), 404, 'NOT_FOUND');
    const cases: [string, string][] = [
      ['', 'query: give either deviceId (with property, action) or roleId (with right, mode)'],
      ['roleId=1&deviceId=1&right=roleManagement', 'query: give either deviceId (with property, action) or roleId (with right, mode)'],
      ['roleId=1', 'query.right: required with roleId'],
      ['roleId=1&right=godMode', 'query.right: expected one of roleManagement, userManagement, viewManagement, deviceManagement, reportManagement, alarmManagement'],
      ['roleId=1&right=roleManagement&mode=sometimes', 'query.mode: expected direct, indirect or either'],
      ['roleId=1&right=roleManagement&property=x', 'query.property: only with deviceId'],
      ['deviceId=1&right=roleManagement', 'query.right: only with roleId'],
      ['deviceId=1&action=delete', 'query.action: expected read or edit'],
      ['deviceId=x', 'query.deviceId: expected an integer >= 0'],
      ['deviceId=1&verbose=1', 'query.verbose: unknown field'],
    ];
    for (const [q, message] of cases) assert.equal(assertError(await explain(app, app.adminToken, q), 400, 'BAD_REQUEST').message, message, q);
  });
});

describe('explain access to a device property', () => {
  async function world() {
    const t = await makeTestApp();
    const [a, ra] = await addChild(t, ROOT_ROLE_ID);
    const [b, ab] = await addChild(t, a);
    const d = await addDevice(t, { name: 'meter', power: 1 });
    const readsName = await addMonitors(t, a, d, { reads: ['name'] });
    const editsPower = await addMonitors(t, b, d, { edits: ['power'] });
    const u = await userIn(t, a);
    return { t, a, b, d, ra, ab, readsName, editsPower, u };
  }
  const monitors = (id: number, roleId: number, deviceId: number, m: { monitorManagement?: boolean; reads?: string[]; edits?: string[] }) =>
    ({ kind: 'monitors', id, roleId, deviceId, monitorManagement: m.monitorManagement ?? false, reads: m.reads ?? [], edits: m.edits ?? [] });

  test('read through reads, edit through edits (a longer chain), and the refusals', async (t) => {
    const { t: app, a, b, d, ab, readsName, editsPower, u } = await world();
    t.after(() => app.close());
    const m = mem(u.memberIds[0], a, u.email);
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&property=name`)).body,
      { allowed: true, grantedBy: 'reads', via: [m, monitors(readsName, a, d, { reads: ['name'] })] });
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&property=name&action=edit`)).body, { allowed: false, via: [] });
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&property=power&action=edit`)).body,
      { allowed: true, grantedBy: 'edits', via: [m, man(ab, a, b), monitors(editsPower, b, d, { edits: ['power'] })] });
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&property=power`)).body.grantedBy, 'edits', 'editable implies readable');
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&property=secret`)).body, { allowed: false, via: [] });
    // no property: read = the device at all (the shortest relation); edit = monitorManagement
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}`)).body,
      { allowed: true, grantedBy: 'monitors', via: [m, monitors(readsName, a, d, { reads: ['name'] })] });
    assert.deepEqual((await explain(app, u.token, `deviceId=${d}&action=edit`)).body, { allowed: false, via: [] });
  });

  test('monitorManagement grants every property; a device the caller cannot read is 404', async (t) => {
    const { t: app, d, u } = await world();
    t.after(() => app.close());
    const [c, rc] = await addChild(app, ROOT_ROLE_ID);
    const mm = await addMonitors(app, c, d, { mm: true });
    const adminMember = (await app.deps.db.get(sql<{ id: number }>`SELECT id FROM members WHERE user_id = ${app.adminId}`))!.id;
    const res = await explain(app, app.adminToken, `deviceId=${d}&property=anything&action=edit`);
    assert.deepEqual(res.body, {
      allowed: true, grantedBy: 'monitorManagement',
      via: [mem(adminMember, ROOT_ROLE_ID, 'admin@localhost'), man(rc, ROOT_ROLE_ID, c), monitors(mm, c, d, { monitorManagement: true })],
    });
    const outsider = await userIn(app, await addRole(app));
    assert.equal(assertError(await explain(app, outsider.token, `deviceId=${d}&property=name`), 404, 'NOT_FOUND').message, `device ${d} not found`);
    assertError(await explain(app, u.token, 'deviceId=9999'), 404, 'NOT_FOUND');
    const lonely = await addDevice(app);
    assertError(await explain(app, app.adminToken, `deviceId=${lonely}`), 404, 'NOT_FOUND');
  });
});

// ---- random installations: the verdict equals the engine's; every chain is valid and of minimal length ----

interface Edge { id: number; parent: number; child: number; flags: Record<Right, boolean> }

const childrenCache = new WeakMap<Edge[], Map<number, Edge[]>>();
function children(edges: Edge[]): Map<number, Edge[]> {
  let map = childrenCache.get(edges);
  if (!map) {
    map = new Map();
    for (const e of edges) map.set(e.parent, [...(map.get(e.parent) ?? []), e]);
    childrenCache.set(edges, map);
  }
  return map;
}

/**
 * The length (in relations) of the shortest chain from a member role to `target` meeting `ok(crossedX, lastEdgeX)`,
 * found layer by layer over (role, crossed, lastX) states — a separate search from the engine's BFS.
 */
function shortestLength(edges: Edge[], members: number[], target: number, right: Right | undefined,
  ok: (crossed: boolean, last: boolean) => boolean): number | undefined {
  let layer = new Set(members.map((m) => `${m}|0|0`));
  const seen = new Set(layer);
  for (let len = 0; layer.size > 0 && len <= 2 * edges.length + 1; len++) {
    for (const s of layer) {
      const [role, crossed, last] = s.split('|');
      if (Number(role) === target && ok(crossed === '1', last === '1')) return len;
    }
    const next = new Set<string>();
    for (const s of layer) {
      const [role, crossed] = s.split('|');
      for (const e of children(edges).get(Number(role)) ?? []) {
        const x = right !== undefined && e.flags[right];
        const key = `${e.child}|${crossed === '1' || x ? 1 : 0}|${x ? 1 : 0}`;
        if (!seen.has(key)) { seen.add(key); next.add(key); }
      }
    }
    layer = next;
  }
  return undefined;
}

async function checkChain(db: Db, userId: number, ex: Explanation, end: number): Promise<Edge[]> {
  assert.equal(ex.via[0]?.kind, 'member');
  const first = ex.via[0].row as { id: number; role_id: number };
  assert.equal((await db.get(sql<{ user_id: number }>`SELECT user_id FROM members WHERE id = ${first.id}`))?.user_id, userId, 'the chain starts at the caller');
  let at = first.role_id;
  const path: Edge[] = [];
  for (const step of ex.via.slice(1)) {
    if (step.kind !== 'manages') break;
    assert.equal(step.row.parent_role_id, at, 'consecutive relations');
    at = step.row.child_role_id;
    path.push({ id: step.row.id, parent: step.row.parent_role_id, child: step.row.child_role_id,
      flags: Object.fromEntries(RIGHTS.map((r) => [r, (step.row as unknown as Record<string, number>)[RIGHT_COLUMN[r]] === 1])) as Record<Right, boolean> });
  }
  assert.equal(at, end, 'the chain ends at the target');
  return path;
}

async function agree(seed: number, inst: RandomInstallation): Promise<void> {
  const db = await loadInstallation(inst);
  const rand = mulberry32(seed);
  const edges: Edge[] = inst.manages.map((m) => ({ id: m.id, parent: m.parentRoleId, child: m.childRoleId, flags: m.flags }));
  const self = new Map(inst.roles.map((r) => [r.id, r.selfRights]));
  const ctx = (s: string) => `seed ${seed}: ${s}`;
  try {
    for (const { id: u } of inst.users) {
      const members = await memberRoles(db, u);
      for (const { id: target } of inst.roles) {
        if (!(await reaches(db, u, target))) continue;
        for (const right of RIGHTS) {
          for (const mode of ['direct', 'indirect', 'either'] as RightMode[]) {
            const ex = await explainRoleRight(db, u, target, right, mode);
            assert.equal(ex.allowed, await hasRight(db, u, target, right, mode), ctx(`u${u} ${mode} ${right} over r${target}`));
            if (!ex.allowed) { assert.deepEqual(ex.via, []); continue; }
            const path = await checkChain(db, u, ex, target);
            const selfX = self.get(target)![right];
            if (ex.grantedBy === 'selfRights') assert.ok(selfX && mode !== 'indirect', ctx('selfRights grant'));
            else if (mode === 'direct') assert.ok(path.at(-1)?.flags[right], ctx('direct: the last relation carries the right'));
            else assert.ok(path.some((e) => e.flags[right]), ctx('indirect: a relation carries the right'));
            const ok = (crossed: boolean, last: boolean) =>
              (mode !== 'indirect' && selfX) || (mode !== 'direct' && crossed) || (mode === 'direct' && last);
            assert.equal(path.length, shortestLength(edges, members, target, right, ok), ctx(`shortest chain u${u} ${mode} ${right} r${target}`));
          }
        }
      }
      for (const { id: d } of inst.devices) {
        const access = await deviceAccess(db, u, d);
        const property = rand() < 0.2 ? undefined : PROPERTY_ALPHABET[Math.floor(rand() * PROPERTY_ALPHABET.length)];
        for (const action of ['read', 'edit'] as const) {
          const ex = await explainDeviceAccess(db, u, d, action, property);
          if (!access.canRead) { assert.equal(ex, undefined, ctx(`d${d} invisible to u${u}`)); continue; }
          const want = property === undefined
            ? (action === 'read' || access.monitorManagement)
            : action === 'read' ? canReadProperty(access, property) : canEditProperty(access, property);
          assert.equal(ex!.allowed, want, ctx(`u${u} ${action} d${d}.${property}`));
          if (!ex!.allowed) continue;
          const last = ex!.via.at(-1)!;
          assert.equal(last.kind, 'monitors');
          const mon = last.row as { role_id: number; device_id: number };
          assert.equal(mon.device_id, d);
          const path = await checkChain(db, u, ex!, mon.role_id);
          // no granting monitors relation is closer
          const granting = inst.monitors.filter((m) => m.deviceId === d && (m.monitorManagement
            || (property === undefined ? action === 'read' : (m.edits.includes(property) || (action === 'read' && m.reads.includes(property))))));
          const lengths = granting.map((m) => shortestLength(edges, members, m.roleId, undefined, () => true)).filter((x) => x !== undefined) as number[];
          assert.equal(path.length, Math.min(...lengths), ctx(`shortest device chain u${u} d${d}`));
        }
      }
    }
  } finally {
    await db.close();
  }
}

// The SQL is the same on both backends; PostgreSQL answers each statement over a socket, so its run checks the first
// 12 seeds (as the rights oracle checks fewer there), the SQLite run all 120.
const SEEDS = testBackend() === 'postgres' ? 12 : 120;

describe('explain agrees with the rights engine', () => {
  test(`on ${SEEDS} seeded random installations: same verdict, valid and shortest chains`, async () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = mulberry32(seed * 7919);
      await agree(seed, randomInstallation(seed, { roles: 2 + Math.floor(r() * 25), users: 2 + Math.floor(r() * 3), devices: 1 + Math.floor(r() * 4) }));
    }
  });
});

