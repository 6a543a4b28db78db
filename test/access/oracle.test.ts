// The SQL rights engine against the independent in-memory model, on thousands of seeded random installations.
// A failure prints the seed and the first disagreement; rerun one seed with ORACLE_SEED=<n>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as engine from '../../src/access/rights.ts';
import { RightsModel, MODES } from '../support/rights-model.ts';
import { randomInstallation, mulberry32, RIGHTS, type InstallationSize } from '../support/random-installation.ts';
import { loadInstallation } from '../support/load-installation.ts';
import { testBackend } from '../support/postgres.ts';

const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);
const names = (s: Set<string> | 'all') => (s === 'all' ? 'all' : [...s].sort().join(','));

/** Compares everything the engine answers for one installation. `pairs` bounds the per-(user, role) checks. */
async function compare(seed: number, size: InstallationSize, pairs: number): Promise<void> {
  const inst = randomInstallation(seed, size);
  const db = await loadInstallation(inst);
  const model = new RightsModel(inst);
  const rand = mulberry32(seed ^ 0x5eed);
  const ctx = (what: string) => `seed ${seed} (${JSON.stringify(inst.roles.length)} roles, ${inst.manages.length} relations): ${what}`;
  try {
    for (const { id: u } of inst.users) {
      assert.deepEqual(await engine.memberRoles(db, u), sorted(model.memberRoles(u)), ctx(`M(${u})`));
      const reach = model.reach(u);
      assert.deepEqual(await engine.reach(db, u), sorted(reach), ctx(`Reach(${u})`));
      // every right of u over every role, from the one downward walk
      const over = await engine.rightsOverReach(db, u);
      assert.deepEqual(sorted(over.keys()), sorted(reach), ctx(`rightsOverReach keys (${u})`));
      for (const right of RIGHTS) {
        const expected = sorted(model.rolesWithRight(u, right, 'either'));
        const actual = sorted([...over].filter(([, r]) => r[right]).map(([id]) => id));
        assert.deepEqual(actual, expected, ctx(`roles where u${u} has ${right}`));
      }
      // devices: the list and the single check
      const readable = await engine.readableDevices(db, u);
      assert.deepEqual(readable.map((a) => a.deviceId), model.readableDevices(u), ctx(`readable devices of u${u}`));
      for (const { id: d } of inst.devices) {
        const want = model.deviceAccess(u, d);
        const got = await engine.deviceAccess(db, u, d);
        const listed = readable.find((a) => a.deviceId === d);
        for (const [label, a] of [['single', got], ['list', listed ?? await engine.deviceAccess(db, -1, d)]] as const) {
          assert.equal(a.canRead, want.canRead, ctx(`${label} canRead u${u} d${d}`));
          assert.equal(a.monitorManagement, want.monitorManagement, ctx(`${label} monitorManagement u${u} d${d}`));
          if (!want.monitorManagement) {
            assert.equal(names(a.reads), names(want.readable), ctx(`${label} readable u${u} d${d}`));
            assert.equal(names(a.edits), names(want.editable), ctx(`${label} editable u${u} d${d}`));
          }
        }
        assert.deepEqual(await engine.authorizersWithMonitorManagement(db, u, d), sorted(model.authorizersWithMonitorManagement(u, d)),
          ctx(`monitorManagement authorizers u${u} d${d}`));
      }
    }
    // authorizer sets, in every mode, for sampled (user, role, right) triples (all of them on small graphs)
    const total = inst.users.length * inst.roles.length;
    for (let i = 0; i < Math.min(pairs, total); i++) {
      const k = total <= pairs ? i : Math.floor(rand() * total);
      const u = inst.users[k % inst.users.length].id;
      const t = inst.roles[Math.floor(k / inst.users.length)].id;
      for (const right of RIGHTS) {
        for (const mode of MODES) {
          const want = sorted(model.authorizersWithRight(u, t, right, mode));
          assert.deepEqual(await engine.authorizersWithRight(db, u, t, right, mode), want, ctx(`authorizers u${u} ${mode} ${right} over r${t}`));
          assert.equal(await engine.hasRight(db, u, t, right, mode), want.length > 0);
        }
      }
      assert.equal(await engine.reaches(db, u, t), model.reach(u).has(t), ctx(`reaches u${u} r${t}`));
    }
  } finally {
    await db.close();
  }
}

const only = process.env.ORACLE_SEED ? Number(process.env.ORACLE_SEED) : undefined;
// PostgreSQL answers each statement over a socket: its run checks the first 120 seeds (12 of them the larger graphs of every
// tenth seed), keeping the suite's time in bounds; the SQLite run checks all 2,000.
const SMALL_SEEDS = testBackend() === 'postgres' ? 120 : 2000;
// The sampled (user, role) pairs whose authorizer sets are compared in every right and mode: most of an installation's
// statements. PostgreSQL samples fewer of them per installation (each is a round trip).
const PAIRS = testBackend() === 'postgres' ? { small: 6, large: 40 } : { small: 16, large: 150 };

test(`engine agrees with the model on ${SMALL_SEEDS} small and medium random installations`, async () => {
  for (let seed = 1; seed <= SMALL_SEEDS; seed++) {
    if (only !== undefined && seed !== only) continue;
    const r = mulberry32(seed);
    const roles = 2 + Math.floor(r() * (seed % 10 === 0 ? 120 : 30));
    await compare(seed, { roles, users: 2 + Math.floor(r() * 6), devices: 1 + Math.floor(r() * 5) }, PAIRS.small);
  }
});

test('engine agrees with the model on large random installations (a few hundred roles)', async () => {
  for (let seed = 100_001; seed <= 100_006; seed++) {
    if (only !== undefined && seed !== only) continue;
    await compare(seed, { roles: 150 + (seed % 4) * 50, users: 10, devices: 20, rooted: seed % 2 === 0 }, PAIRS.large);
  }
});
