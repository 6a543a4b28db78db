// The company walks of src/access/companies.ts against brute force over the plain graph, on seeded random
// installations with random company marks. A failure names the seed; rerun one with COMPANY_SEED=<n>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as companies from '../../src/access/companies.ts';
import { randomInstallation, mulberry32, type Installation } from '../support/random-installation.ts';
import { sql } from 'kysely';
import { testBackend } from '../support/postgres.ts';
import { loadInstallation } from '../support/load-installation.ts';

const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);

/** Every role reachable from `start` along `next` (start included). */
function walk(start: Iterable<number>, next: Map<number, number[]>): Set<number> {
  const seen = new Set<number>(start);
  const todo = [...seen];
  while (todo.length) for (const n of next.get(todo.pop()!) ?? []) if (!seen.has(n)) { seen.add(n); todo.push(n); }
  return seen;
}

function model(inst: Installation, companyIds: Set<number>) {
  const children = new Map<number, number[]>();
  const parents = new Map<number, number[]>();
  for (const m of inst.manages) {
    children.set(m.parentRoleId, [...(children.get(m.parentRoleId) ?? []), m.childRoleId]);
    parents.set(m.childRoleId, [...(parents.get(m.childRoleId) ?? []), m.parentRoleId]);
  }
  const memberRoles = (u: number) => inst.members.filter((m) => m.userId === u).map((m) => m.roleId);
  const strictDescendants = (roots: number[]) => walk(roots.flatMap((r) => children.get(r) ?? []), children);
  const strictAncestors = (roots: number[]) => walk(roots.flatMap((r) => parents.get(r) ?? []), parents);
  return {
    /** M(u) and every role managing one of them, through any chain */
    above: (u: number) => walk(memberRoles(u), parents),
    reach: (u: number) => walk(memberRoles(u), children),
    strictDescendants,
    strictAncestors,
    monitoredBy: (cs: number[]) => {
      const roles = walk(cs, children);
      return new Set(inst.monitors.filter((m) => roles.has(m.roleId)).map((m) => m.deviceId));
    },
    companyIds,
  };
}

async function compare(seed: number): Promise<void> {
  const rand = mulberry32(seed ^ 0xc0ffee);
  const inst = randomInstallation(seed, { roles: 4 + Math.floor(rand() * 30), users: 1 + Math.floor(rand() * 5), devices: Math.floor(rand() * 20) });
  const db = await loadInstallation(inst);
  try {
    const marked = new Set(inst.roles.filter(() => rand() < 0.35).map((r) => r.id));
    for (const id of marked) {
      await db.run(sql`UPDATE roles SET is_company = 1, uuid = ${`00000000-0000-4000-8000-${String(id).padStart(12, '0')}`} WHERE id = ${id}`);
    }
    const m = model(inst, marked);
    const ctx = (what: string) => `seed ${seed} (${inst.roles.length} roles, ${inst.manages.length} relations): ${what}`;
    const allIds = [...inst.roles.map((r) => r.id), 987_654];
    for (const { id: u } of inst.users) {
      const above = m.above(u);
      const visible = new Set([...above, ...m.reach(u)]);
      assert.deepEqual((await companies.memberCompanies(db, u)).map((c) => c.id), sorted([...above].filter((r) => marked.has(r))), ctx(`memberCompanies(${u})`));
      assert.deepEqual(await companies.visibleCompanyIds(db, u, allIds), sorted([...visible].filter((r) => marked.has(r))), ctx(`visibleCompanyIds(${u})`));
      assert.deepEqual(await companies.visibleRoleIds(db, u, allIds), sorted(visible), ctx(`visibleRoleIds(${u})`));
    }
    for (let i = 0; i < 5; i++) {
      const some = [...marked].filter(() => rand() < 0.4);
      const roles = inst.roles.map((r) => r.id).filter(() => rand() < 0.3);
      assert.deepEqual(sorted(await companies.descendantsOf(db, some)), sorted(m.strictDescendants(some)), ctx(`rolesManagedBy ${some}`));
      assert.deepEqual(sorted(await companies.devicesMonitoredByCompanies(db, some)), sorted(m.monitoredBy(some)), ctx(`devicesMonitoredBy ${some}`));
      const managing = m.strictAncestors(roles);
      assert.deepEqual(sorted(await companies.companiesManaging(db, some, roles)), sorted(some.filter((c) => managing.has(c))), ctx(`companiesManaging ${some} / ${roles}`));
    }
  } finally {
    await db.close();
  }
}

// PostgreSQL answers each statement over a socket: its run checks the first 150 seeds, the SQLite run all 500.
const SEEDS = testBackend() === 'postgres' ? 150 : 500;

test(`company walks agree with brute force on ${SEEDS} random installations`, async () => {
  const only = process.env.COMPANY_SEED;
  if (only) { await compare(Number(only)); return; }
  for (let seed = 1; seed <= SEEDS; seed++) await compare(seed);
});
