// The reference rights model (test/support/rights-model.ts) and the random installation generator: hand-worked cases
// from docs/api.md#rights, a cross-check of the model against literal path enumeration, and generator sanity.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MODES, RIGHTS, RightsModel } from '../support/rights-model.ts';
import type { Mode } from '../support/rights-model.ts';
import {
  PROPERTY_ALPHABET, SHAPES, installationProblems, noFlags, randomInstallation,
} from '../support/random-installation.ts';
import type { Installation, ManagesRow, Right } from '../support/random-installation.ts';

// ---- a small builder for hand-made installations ----------------------------------------------------------------

interface Spec {
  /** [roleId, selfRights that are true] */
  roles: Array<[number, Right[]]>;
  /** [parentRoleId, childRoleId, flags that are true] */
  manages: Array<[number, number, Right[]]>;
  /** [roleId, userId] */
  members: Array<[number, number]>;
  monitors?: Array<{ roleId: number; deviceId: number; mm?: boolean; reads?: string[]; edits?: string[] }>;
  /** users with no membership */
  extraUsers?: number[];
}

function flagsOf(rights: Right[]) {
  const f = noFlags();
  for (const r of rights) f[r] = true;
  return f;
}

function build(spec: Spec): Installation {
  let nextId = 1000;
  const userIds = new Set<number>([...spec.members.map(([, u]) => u), ...(spec.extraUsers ?? [])]);
  const deviceIds = new Set<number>((spec.monitors ?? []).map((m) => m.deviceId));
  return {
    roles: spec.roles.map(([id, self]) => ({ id, selfRights: flagsOf(self) })),
    manages: spec.manages.map(([p, c, f]) => ({ id: nextId++, parentRoleId: p, childRoleId: c, flags: flagsOf(f) })),
    members: spec.members.map(([roleId, userId]) => ({ id: nextId++, roleId, userId })),
    users: [...userIds].map((id) => ({ id })),
    devices: [...deviceIds].map((id) => ({ id })),
    monitors: (spec.monitors ?? []).map((m) => ({
      id: nextId++, roleId: m.roleId, deviceId: m.deviceId,
      monitorManagement: m.mm ?? false, reads: m.reads ?? [], edits: m.edits ?? [],
    })),
  };
}

const sorted = (s: Iterable<number>): number[] => [...s].sort((a, b) => a - b);
const setOf = (s: Set<string> | 'all'): string[] | 'all' => (s === 'all' ? 'all' : [...s].sort());

/** hasRight over a list of roles, in one mode: [T, expected] pairs, checked one by one with a helpful message. */
function expectRights(model: RightsModel, userId: number, right: Right, mode: Mode, expected: Record<number, boolean>): void {
  for (const [t, want] of Object.entries(expected)) {
    assert.equal(model.hasRight(userId, Number(t), right, mode), want, `user ${userId} ${mode} ${right} over role ${t}`);
  }
}

/** Every (user, role, right, mode): hasRight equals "authorizersWithRight is non-empty". */
function assertUnionRule(model: RightsModel, inst: Installation): void {
  for (const u of inst.users) for (const r of inst.roles) for (const x of RIGHTS) for (const mode of MODES) {
    const has = model.hasRight(u.id, r.id, x, mode);
    const authorizers = model.authorizersWithRight(u.id, r.id, x, mode);
    assert.equal(has, authorizers.size > 0, `user ${u.id} ${mode} ${x} over ${r.id}`);
    for (const a of authorizers) assert.ok(model.memberRoles(u.id).has(a));
  }
}

// ---- hand-worked cases ------------------------------------------------------------------------------------------

describe('rights model: hand-worked cases from §2', () => {
  it('chain 1 → 2 → 3 with roleManagement only on 2 → 3', () => {
    // user 101 ∈ role 1, user 102 ∈ role 2, user 103 ∈ role 3, user 104 in no role.
    const inst = build({
      roles: [[1, []], [2, []], [3, []]],
      manages: [[1, 2, []], [2, 3, ['roleManagement']]],
      members: [[1, 101], [2, 102], [3, 103]],
      extraUsers: [104],
    });
    const m = new RightsModel(inst);
    assert.deepEqual(sorted(m.memberRoles(101)), [1]);
    assert.deepEqual(sorted(m.reach(101)), [1, 2, 3]);
    assert.deepEqual(sorted(m.reach(102)), [2, 3]);
    assert.deepEqual(sorted(m.reach(103)), [3]);
    assert.deepEqual(sorted(m.reach(104)), []);
    assert.deepEqual(sorted(m.reachFromRole(2)), [2, 3]);

    // The member of role 1 has indirect roleManagement over 3 (path 1 → 2 → 3 carries it) but not over 2 or 1.
    expectRights(m, 101, 'roleManagement', 'indirect', { 1: false, 2: false, 3: true });
    // Direct: relation 2 → 3 carries the flag and 2 ∈ Reach(101), so it is direct as well.
    expectRights(m, 101, 'roleManagement', 'direct', { 1: false, 2: false, 3: true });
    expectRights(m, 101, 'roleManagement', 'either', { 1: false, 2: false, 3: true });
    // The single-relation case is both direct and indirect.
    expectRights(m, 102, 'roleManagement', 'direct', { 2: false, 3: true });
    expectRights(m, 102, 'roleManagement', 'indirect', { 2: false, 3: true });
    // A member of 3 holds nothing over 3 (no selfRights, no relation from a reached role).
    for (const mode of MODES) expectRights(m, 103, 'roleManagement', mode, { 1: false, 2: false, 3: false });
    for (const mode of MODES) expectRights(m, 104, 'roleManagement', mode, { 1: false, 2: false, 3: false });
    // Other rights: none anywhere.
    for (const x of RIGHTS.filter((r) => r !== 'roleManagement')) {
      for (const mode of MODES) expectRights(m, 101, x, mode, { 1: false, 2: false, 3: false });
    }
    assert.deepEqual(sorted(m.authorizersWithRight(101, 3, 'roleManagement', 'indirect')), [1]);
    assert.deepEqual(sorted(m.authorizersWithRight(101, 2, 'roleManagement', 'either')), []);
    assert.deepEqual(sorted(m.rolesWithRight(101, 'roleManagement', 'indirect')), [3]);
    assertUnionRule(m, inst);
  });

  it('selfRights give a right over the role itself only, never over its descendants', () => {
    // 1 → 2 → 3, no flags; role 2 has selfRights.userManagement.
    const inst = build({
      roles: [[1, []], [2, ['userManagement']], [3, []]],
      manages: [[1, 2, []], [2, 3, []]],
      members: [[1, 101], [2, 102], [3, 103]],
    });
    const m = new RightsModel(inst);
    // Role 2 is in Reach(101) and has the selfRight → direct over 2; nothing over 3 (the child) or 1.
    expectRights(m, 101, 'userManagement', 'direct', { 1: false, 2: true, 3: false });
    // No relation carries userManagement, so there is no indirect right at all.
    expectRights(m, 101, 'userManagement', 'indirect', { 1: false, 2: false, 3: false });
    expectRights(m, 101, 'userManagement', 'either', { 1: false, 2: true, 3: false });
    expectRights(m, 102, 'userManagement', 'direct', { 2: true, 3: false });
    expectRights(m, 102, 'userManagement', 'either', { 2: true, 3: false });
    // A member of 3 does not reach 2, so 2's selfRights do nothing for them.
    expectRights(m, 103, 'userManagement', 'either', { 1: false, 2: false, 3: false });
    expectRights(m, 101, 'roleManagement', 'either', { 1: false, 2: false, 3: false });
    assert.deepEqual(sorted(m.authorizersWithRight(101, 2, 'userManagement', 'direct')), [1]);
    assertUnionRule(m, inst);
  });

  it('a diamond 1 → {2, 3} → 4 → 5', () => {
    // deviceManagement only on 3 → 4, alarmManagement only on 1 → 2.
    const inst = build({
      roles: [[1, []], [2, []], [3, []], [4, []], [5, []]],
      manages: [[1, 2, ['alarmManagement']], [1, 3, []], [2, 4, []], [3, 4, ['deviceManagement']], [4, 5, []]],
      members: [[1, 101], [2, 102], [3, 103], [4, 104]],
    });
    const m = new RightsModel(inst);
    assert.deepEqual(sorted(m.reach(101)), [1, 2, 3, 4, 5]);
    assert.deepEqual(sorted(m.reach(102)), [2, 4, 5]);

    // Member of 1: deviceManagement via 1 → 3 → 4 over 4 and 5 (a flag reaches all descendants), not over 2 or 3.
    expectRights(m, 101, 'deviceManagement', 'indirect', { 1: false, 2: false, 3: false, 4: true, 5: true });
    // Directly only over 4 (the relation 3 → 4 itself); 5 is below it but there is no flagged relation into 5.
    expectRights(m, 101, 'deviceManagement', 'direct', { 1: false, 2: false, 3: false, 4: true, 5: false });
    expectRights(m, 101, 'deviceManagement', 'either', { 1: false, 2: false, 3: false, 4: true, 5: true });
    // alarmManagement via 1 → 2, over 2 and everything below 2 (4 through 2 → 4, 5), not over 3.
    expectRights(m, 101, 'alarmManagement', 'indirect', { 1: false, 2: true, 3: false, 4: true, 5: true });
    expectRights(m, 101, 'alarmManagement', 'direct', { 1: false, 2: true, 3: false, 4: false, 5: false });

    // Member of 2: reaches 4 but not 3, so the flag on 3 → 4 grants nothing, neither directly nor indirectly;
    // and the alarmManagement flag on 1 → 2 lies above 2, so it does not count either.
    for (const mode of MODES) {
      expectRights(m, 102, 'deviceManagement', mode, { 2: false, 4: false, 5: false });
      expectRights(m, 102, 'alarmManagement', mode, { 2: false, 4: false, 5: false });
    }
    // Member of 3: the single relation 3 → 4.
    expectRights(m, 103, 'deviceManagement', 'indirect', { 3: false, 4: true, 5: true });
    expectRights(m, 103, 'deviceManagement', 'direct', { 3: false, 4: true, 5: false });
    // Member of 4: the flag is on a relation into 4, from a role 4 does not reach.
    for (const mode of MODES) expectRights(m, 104, 'deviceManagement', mode, { 4: false, 5: false });

    assert.deepEqual(sorted(m.rolesWithRight(101, 'deviceManagement', 'indirect')), [4, 5]);
    assert.deepEqual(sorted(m.rolesWithRight(101, 'alarmManagement', 'either')), [2, 4, 5]);
    assertUnionRule(m, inst);
  });

  it('a user in two roles: a two-condition rule needs ONE authorizing role that meets both', () => {
    // manages PUT without password: (direct or indirect roleManagement over P) AND (indirect roleManagement over C).
    // Role 10 → 11 (P) with roleManagement; role 20 → 21 (C) with roleManagement. User 101 ∈ {10, 20}.
    // Role 30 → 10 and 30 → 20 without flags; user 102 ∈ {30}: role 30 alone meets both conditions.
    // Also: device 500 has a monitorManagement relation at role 21; role 20 reaches it; role 10 has deviceManagement
    // over 11 — so for a monitors PUT on (11, 500) user 101 meets each half through a different role.
    const inst = build({
      roles: [[10, []], [11, []], [20, []], [21, []], [30, []]],
      manages: [
        [10, 11, ['roleManagement', 'deviceManagement']],
        [20, 21, ['roleManagement']],
        [30, 10, []],
        [30, 20, []],
      ],
      members: [[10, 101], [20, 101], [30, 102]],
      monitors: [{ roleId: 21, deviceId: 500, mm: true }],
    });
    const m = new RightsModel(inst);
    const P = 11;
    const C = 21;
    // Each condition alone holds for user 101 (a one-condition rule is the union over authorizing roles) ...
    assert.equal(m.hasRight(101, P, 'roleManagement', 'either'), true);
    assert.equal(m.hasRight(101, C, 'roleManagement', 'indirect'), true);
    assert.deepEqual(sorted(m.authorizersWithRight(101, P, 'roleManagement', 'either')), [10]);
    assert.deepEqual(sorted(m.authorizersWithRight(101, C, 'roleManagement', 'indirect')), [20]);
    // ... but no single authorizing role meets both.
    const both101 = [...m.authorizersWithRight(101, P, 'roleManagement', 'either')]
      .filter((a) => m.authorizersWithRight(101, C, 'roleManagement', 'indirect').has(a));
    assert.deepEqual(both101, []);
    // User 102 acts through role 30, which reaches both flagged relations.
    const both102 = [...m.authorizersWithRight(102, P, 'roleManagement', 'either')]
      .filter((a) => m.authorizersWithRight(102, C, 'roleManagement', 'indirect').has(a));
    assert.deepEqual(both102, [30]);

    // Monitors PUT on role 11 for device 500: deviceManagement over 11 (via role 10) and monitorManagement on 500 (via 20).
    assert.deepEqual(sorted(m.authorizersWithRight(101, 11, 'deviceManagement', 'either')), [10]);
    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(101, 500)), [20]);
    assert.equal(m.deviceAccess(101, 500).monitorManagement, true);
    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(102, 500)), [30]);
    assert.deepEqual(sorted(m.authorizersWithRight(102, 11, 'deviceManagement', 'either')), [30]);
    assertUnionRule(m, inst);
  });

  it('device access: unions of reads and edits; monitorManagement makes everything readable and editable', () => {
    // 1 → 2, 1 → 3; role 4 stands apart.
    const inst = build({
      roles: [[1, []], [2, []], [3, []], [4, []]],
      manages: [[1, 2, []], [1, 3, []]],
      members: [[1, 101], [2, 102], [3, 103], [4, 104], [2, 105], [4, 105]],
      extraUsers: [106],
      monitors: [
        { roleId: 2, deviceId: 500, reads: ['a', 'b'], edits: ['c'] },
        { roleId: 3, deviceId: 500, reads: ['b'], edits: ['d'] },
        { roleId: 4, deviceId: 500, mm: true },
        { roleId: 2, deviceId: 501 }, // readable device with no readable property
        { roleId: 3, deviceId: 502, mm: true, reads: ['a'] },
        { roleId: 4, deviceId: 503, reads: ['e'], edits: ['e', 'f'] },
      ],
    });
    const m = new RightsModel(inst);
    const view = (u: number, d: number) => {
      const a = m.deviceAccess(u, d);
      return { canRead: a.canRead, monitorManagement: a.monitorManagement, readable: setOf(a.readable), editable: setOf(a.editable) };
    };
    // Member of 1 reaches 2 and 3: reads ∪ edits = {a, b, c, d}; edits = {c, d}.
    assert.deepEqual(view(101, 500), { canRead: true, monitorManagement: false, readable: ['a', 'b', 'c', 'd'], editable: ['c', 'd'] });
    assert.deepEqual(view(102, 500), { canRead: true, monitorManagement: false, readable: ['a', 'b', 'c'], editable: ['c'] });
    assert.deepEqual(view(103, 500), { canRead: true, monitorManagement: false, readable: ['b', 'd'], editable: ['d'] });
    assert.deepEqual(view(104, 500), { canRead: true, monitorManagement: true, readable: 'all', editable: 'all' });
    // 105 ∈ {2, 4}: monitorManagement through 4 wins over the restricted relation of 2.
    assert.deepEqual(view(105, 500), { canRead: true, monitorManagement: true, readable: 'all', editable: 'all' });
    assert.deepEqual(view(106, 500), { canRead: false, monitorManagement: false, readable: [], editable: [] });
    assert.deepEqual(view(101, 501), { canRead: true, monitorManagement: false, readable: [], editable: [] });
    assert.deepEqual(view(103, 501), { canRead: false, monitorManagement: false, readable: [], editable: [] });
    assert.deepEqual(view(101, 502), { canRead: true, monitorManagement: true, readable: 'all', editable: 'all' });
    assert.deepEqual(view(102, 502), { canRead: false, monitorManagement: false, readable: [], editable: [] });
    assert.deepEqual(view(104, 503), { canRead: true, monitorManagement: false, readable: ['e', 'f'], editable: ['e', 'f'] });
    assert.deepEqual(view(101, 503), { canRead: false, monitorManagement: false, readable: [], editable: [] });
    assert.deepEqual(view(101, 999), { canRead: false, monitorManagement: false, readable: [], editable: [] });

    assert.deepEqual(m.readableDevices(101), [500, 501, 502]);
    assert.deepEqual(m.readableDevices(102), [500, 501]);
    assert.deepEqual(m.readableDevices(103), [500, 502]);
    assert.deepEqual(m.readableDevices(104), [500, 503]);
    assert.deepEqual(m.readableDevices(105), [500, 501, 503]);
    assert.deepEqual(m.readableDevices(106), []);

    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(101, 500)), []);
    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(101, 502)), [1]);
    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(105, 500)), [4]);
    assert.deepEqual(sorted(m.authorizersWithMonitorManagement(105, 501)), []);
  });
});

// ---- cross-check against literal path enumeration ---------------------------------------------------------------

/** Every path of one or more relations that starts at `start` (exponential; for small graphs only). */
function pathsFrom(inst: Installation, start: number): ManagesRow[][] {
  const out: ManagesRow[][] = [];
  const extend = (path: ManagesRow[], at: number): void => {
    for (const m of inst.manages) {
      if (m.parentRoleId !== at) continue;
      if (path.some((p) => p.parentRoleId === m.childRoleId) || start === m.childRoleId) continue; // paths, not walks
      const next = [...path, m];
      out.push(next);
      extend(next, m.childRoleId);
    }
  };
  extend([], start);
  return out;
}

/** §2 read word by word, with S the set of authorizing roles and paths enumerated explicitly. */
function literalHolds(inst: Installation, S: number[], t: number, x: Right, mode: Mode): boolean {
  const paths = S.flatMap((r0) => pathsFrom(inst, r0));
  const inReach = (r: number): boolean => S.includes(r) || paths.some((p) => p[p.length - 1].childRoleId === r);
  const role = inst.roles.find((r) => r.id === t);
  const direct = (inReach(t) && role !== undefined && role.selfRights[x])
    || inst.manages.some((m) => m.childRoleId === t && m.flags[x] && inReach(m.parentRoleId));
  const indirect = paths.some((p) => p[p.length - 1].childRoleId === t && p.some((m) => m.flags[x]));
  return mode === 'direct' ? direct : mode === 'indirect' ? indirect : direct || indirect;
}

describe('rights model agrees with literal path enumeration', () => {
  it('on 400 small random installations, for every user, role, right and mode, and every authorizing role', () => {
    let checked = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const inst = randomInstallation(seed, { roles: 1 + (seed % 9), users: 4, devices: 3 });
      const m = new RightsModel(inst);
      for (const u of inst.users) {
        const M = sorted(m.memberRoles(u.id));
        assert.deepEqual(M, sorted(inst.members.filter((x) => x.userId === u.id).map((x) => x.roleId)));
        const reachLiteral = inst.roles.map((r) => r.id)
          .filter((r) => M.includes(r) || M.some((r0) => pathsFrom(inst, r0).some((p) => p[p.length - 1].childRoleId === r)));
        assert.deepEqual(sorted(m.reach(u.id)), reachLiteral, `seed ${seed} Reach(${u.id})`);
        for (const r of inst.roles) for (const x of RIGHTS) for (const mode of MODES) {
          const where = `seed ${seed} user ${u.id} ${mode} ${x} over ${r.id}`;
          assert.equal(m.hasRight(u.id, r.id, x, mode), literalHolds(inst, M, r.id, x, mode), where);
          const authorizers = M.filter((a) => literalHolds(inst, [a], r.id, x, mode));
          assert.deepEqual(sorted(m.authorizersWithRight(u.id, r.id, x, mode)), authorizers, where);
          checked++;
        }
      }
      assertUnionRule(m, inst);
    }
    assert.ok(checked > 50_000, `checked ${checked}`);
  });

  it('device access equals the unions over monitors relations of reached roles, on random installations', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const inst = randomInstallation(seed, { roles: 2 + (seed % 12), users: 5, devices: 4 });
      const m = new RightsModel(inst);
      for (const u of inst.users) {
        const reach = m.reach(u.id);
        const readable: number[] = [];
        for (const d of inst.devices) {
          const rels = inst.monitors.filter((x) => x.deviceId === d.id && reach.has(x.roleId));
          const a = m.deviceAccess(u.id, d.id);
          assert.equal(a.canRead, rels.length > 0);
          if (a.canRead) readable.push(d.id);
          const mm = rels.some((x) => x.monitorManagement);
          assert.equal(a.monitorManagement, mm);
          if (mm) {
            assert.equal(a.readable, 'all');
            assert.equal(a.editable, 'all');
          } else {
            assert.deepEqual(setOf(a.readable), [...new Set(rels.flatMap((x) => [...x.reads, ...x.edits]))].sort());
            assert.deepEqual(setOf(a.editable), [...new Set(rels.flatMap((x) => x.edits))].sort());
          }
          const mmAuthorizers = sorted(m.memberRoles(u.id)).filter((A) => {
            const reachA = m.reachFromRole(A);
            return rels.some((x) => x.monitorManagement && reachA.has(x.roleId));
          });
          assert.deepEqual(sorted(m.authorizersWithMonitorManagement(u.id, d.id)), mmAuthorizers);
          assert.equal(mmAuthorizers.length > 0, mm);
        }
        assert.deepEqual(m.readableDevices(u.id), readable);
      }
    }
  });

  it('rights are neither always nor never granted across random installations', () => {
    const counts = new Map<string, { yes: number; no: number }>();
    for (let seed = 1; seed <= 150; seed++) {
      const inst = randomInstallation(seed, { roles: 12, users: 6, devices: 4 });
      const m = new RightsModel(inst);
      for (const u of inst.users) for (const r of inst.roles) for (const x of RIGHTS) for (const mode of MODES) {
        const key = `${x}/${mode}`;
        const c = counts.get(key) ?? { yes: 0, no: 0 };
        if (m.hasRight(u.id, r.id, x, mode)) c.yes++;
        else c.no++;
        counts.set(key, c);
      }
    }
    assert.equal(counts.size, RIGHTS.length * MODES.length);
    for (const [key, c] of counts) {
      assert.ok(c.yes > 0.02 * (c.yes + c.no), `${key} granted too rarely: ${c.yes}/${c.yes + c.no}`);
      assert.ok(c.no > 0.2 * (c.yes + c.no), `${key} granted too often: ${c.yes}/${c.yes + c.no}`);
    }
  });

  it('handles a few hundred roles', () => {
    for (const shape of ['dense', 'layered', 'chain'] as const) {
      const inst = randomInstallation(7, { roles: 300, users: 40, devices: 60, shape });
      const m = new RightsModel(inst);
      let granted = 0;
      for (const u of inst.users) {
        for (const x of RIGHTS) for (const mode of MODES) granted += m.rolesWithRight(u.id, x, mode).size;
        granted += m.readableDevices(u.id).length;
      }
      assert.ok(granted > 0, shape);
    }
  });
});

// ---- generator sanity -------------------------------------------------------------------------------------------

describe('randomInstallation', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const size = { roles: 30, users: 10, devices: 8 };
    assert.deepEqual(randomInstallation(42, size), randomInstallation(42, size));
    assert.notDeepEqual(randomInstallation(42, size), randomInstallation(43, size));
  });

  it('produces well-formed installations (DAG, unique ids, valid references) for every shape', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const shape = SHAPES[seed % SHAPES.length];
      const rooted = seed % 2 === 0;
      const inst = randomInstallation(seed, { roles: 1 + (seed % 60), users: seed % 15, devices: seed % 10, shape, rooted });
      assert.deepEqual(installationProblems(inst), [], `seed ${seed} ${shape}`);
      assert.deepEqual(inst.roles.map((r) => r.id), Array.from({ length: 1 + (seed % 60) }, (_, i) => i + 1));
      assert.equal(inst.users.length, seed % 15);
      assert.equal(inst.devices.length, seed % 10);
      // Ids are distinct across all kinds, all ≥ 1.
      const all = [inst.roles, inst.users, inst.devices, inst.manages, inst.members, inst.monitors].flat().map((o) => o.id);
      assert.equal(new Set(all).size, all.length, `seed ${seed}`);
      assert.ok(all.every((id) => Number.isInteger(id) && id >= 1));
      // Every device has a monitors relation with monitorManagement.
      for (const d of inst.devices) assert.ok(inst.monitors.some((x) => x.deviceId === d.id && x.monitorManagement));
      assert.equal(inst.params.shape, shape);
      assert.equal(inst.params.rooted, rooted);
    }
  });

  it('rooted installations: role 1 has all selfRights and reaches every role', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const inst = randomInstallation(seed, { roles: 40, users: 5, devices: 3, rooted: true });
      const m = new RightsModel(inst);
      assert.ok(RIGHTS.every((x) => inst.roles[0].selfRights[x]));
      assert.equal(m.reachFromRole(1).size, 40, `seed ${seed} ${inst.params.shape}`);
      assert.ok(inst.manages.every((x) => x.childRoleId !== 1));
    }
  });

  it('detects broken installations', () => {
    const inst = randomInstallation(5, { roles: 10, users: 3, devices: 2, shape: 'chain', rooted: true });
    const withCycle = { ...inst, manages: [...inst.manages, { id: 9999, parentRoleId: 10, childRoleId: 1, flags: noFlags() }] };
    // In a rooted chain every role is reachable from 1, so 10 → 1 closes a cycle whatever the order.
    assert.ok(installationProblems(withCycle).includes('the manages graph has a cycle'));
    const selfLoop = { ...inst, manages: [...inst.manages, { id: 9999, parentRoleId: 3, childRoleId: 3, flags: noFlags() }] };
    assert.ok(installationProblems(selfLoop).some((p) => p.includes('self-loop')));
    const dup = { ...inst, manages: [...inst.manages, { ...inst.manages[0], id: 9999 }] };
    assert.ok(installationProblems(dup).some((p) => p.startsWith('two manages relations')));
  });

  it('varies shapes: depth, diamonds, several roots, memberless roles, users in several roles, mixed flags', () => {
    let deepChain = false, diamond = false, severalRoots = false, memberless = false, multiRole = false, overlap = false;
    const flagCount = { yes: 0, no: 0 };
    const shapes = new Set<string>();
    for (let seed = 1; seed <= 100; seed++) {
      const inst = randomInstallation(seed, { roles: 25, users: 12, devices: 6 });
      shapes.add(inst.params.shape);
      const parents = new Map<number, number[]>();
      for (const x of inst.manages) parents.set(x.childRoleId, [...(parents.get(x.childRoleId) ?? []), x.parentRoleId]);
      // longest path length (in relations), memoized over the DAG
      const depth = new Map<number, number>();
      const longest = (r: number): number => {
        if (!depth.has(r)) depth.set(r, Math.max(0, ...(parents.get(r) ?? []).map((p) => longest(p) + 1)));
        return depth.get(r)!;
      };
      if (Math.max(...inst.roles.map((r) => longest(r.id))) >= 10) deepChain = true;
      if (inst.roles.some((r) => (parents.get(r.id) ?? []).length >= 2)) diamond = true;
      if (inst.roles.filter((r) => !parents.has(r.id)).length >= 2) severalRoots = true;
      if (inst.roles.some((r) => !inst.members.some((x) => x.roleId === r.id))) memberless = true;
      if (inst.users.some((u) => inst.members.filter((x) => x.userId === u.id).length >= 2)) multiRole = true;
      if (inst.monitors.some((a) => inst.monitors.some((b) => a !== b && a.deviceId === b.deviceId
        && a.edits.some((p) => b.reads.includes(p))))) overlap = true;
      for (const x of inst.manages) for (const r of RIGHTS) (x.flags[r] ? flagCount.yes++ : flagCount.no++);
      for (const x of inst.monitors) for (const p of [...x.reads, ...x.edits]) assert.ok((PROPERTY_ALPHABET as readonly string[]).includes(p));
    }
    assert.deepEqual([...shapes].sort(), [...SHAPES].sort());
    assert.deepEqual({ deepChain, diamond, severalRoots, memberless, multiRole, overlap },
      { deepChain: true, diamond: true, severalRoots: true, memberless: true, multiRole: true, overlap: true });
    // Mostly false, some true.
    assert.ok(flagCount.yes > 0.03 * (flagCount.yes + flagCount.no), JSON.stringify(flagCount));
    assert.ok(flagCount.yes < 0.4 * (flagCount.yes + flagCount.no), JSON.stringify(flagCount));
  });

  it('respects explicit parameters', () => {
    const inst = randomInstallation(9, { roles: 20, users: 5, devices: 4, monitors: 10, shape: 'tree', rooted: false, flagProbability: 0, selfRightProbability: 0 });
    assert.equal(inst.monitors.length, 10);
    assert.ok(inst.manages.every((x) => RIGHTS.every((r) => !x.flags[r])));
    assert.ok(inst.roles.every((x) => RIGHTS.every((r) => !x.selfRights[r])));
    // tree: every role after the first in the order has exactly one parent, so there are roles - 1 relations.
    assert.equal(inst.manages.length, 19);
    const m = new RightsModel(inst);
    for (const u of inst.users) for (const x of RIGHTS) for (const mode of MODES) assert.equal(m.rolesWithRight(u.id, x, mode).size, 0);
  });
});
