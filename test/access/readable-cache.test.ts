// The readable sets a node keeps in memory (rights.ts allReadableDevices / readableDevicesOf) against the uncached walk,
// on seeded random installations changed by random writes to every table a readable set is made of — written with
// plain SQL, around the API, so the database's rights version (sql/0012) is what must notice. After every change each
// user's cached answer must equal a fresh walk; while nothing changes, the cache must actually answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import * as engine from '../../src/access/rights.ts';
import type { Db } from '../../src/db/open.ts';
import { randomInstallation, mulberry32, RIGHTS } from '../support/random-installation.ts';
import { loadInstallation } from '../support/load-installation.ts';
import { testBackend } from '../support/postgres.ts';

const SEEDS = testBackend() === 'postgres' ? 5 : 25;
const STEPS = 30;

const shape = (list: readonly engine.DeviceAccess[]) => list.map((a) => ({
  id: a.deviceId, canRead: a.canRead, mm: a.monitorManagement, reads: [...a.reads].sort(), edits: [...a.edits].sort(),
}));

type Change = (db: Db, pick: (n: number) => number) => Promise<string>;

const ids = async (db: Db, table: string) =>
  (await db.all(sql<{ id: number }>`SELECT id FROM ${sql.table(table)} ORDER BY id`)).map((r) => r.id);
const anyOf = async (db: Db, table: string, pick: (n: number) => number) => {
  const all = await ids(db, table);
  return all.length === 0 ? undefined : all[pick(all.length)];
};
const flags = (pick: (n: number) => number) => sql.join(RIGHTS.map(() => pick(3) === 0 ? 1 : 0));
const flagColumns = sql.raw(RIGHTS.map((r) => engine.RIGHT_COLUMN[r]).join(', '));

/** One kind of change per table and operation (cascades included); each says what it did, for the failure message. */
const CHANGES: Change[] = [
  async (db, pick) => {
    const [role, user] = [await anyOf(db, 'roles', pick), await anyOf(db, 'users', pick)];
    if (role === undefined || user === undefined) return 'nothing';
    await db.run(sql`INSERT INTO members (role_id, user_id) VALUES (${role}, ${user}) ON CONFLICT DO NOTHING`);
    return `member u${user} of r${role}`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'members', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM members WHERE id = ${id}`);
    return `delete members ${id}`;
  },
  async (db, pick) => {
    const [parent, child] = [await anyOf(db, 'roles', pick), await anyOf(db, 'roles', pick)];
    if (parent === undefined || child === undefined || parent === child) return 'nothing';
    await db.run(sql`INSERT INTO manages (parent_role_id, child_role_id, ${flagColumns}) VALUES (${parent}, ${child}, ${flags(pick)}) ON CONFLICT DO NOTHING`);
    return `manages r${parent} -> r${child}`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'manages', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM manages WHERE id = ${id}`);
    return `delete manages ${id}`;
  },
  async (db, pick) => {
    const [role, device] = [await anyOf(db, 'roles', pick), await anyOf(db, 'devices', pick)];
    if (role === undefined || device === undefined) return 'nothing';
    const reads = JSON.stringify(['a', 'b', 'c'].filter(() => pick(2) === 0));
    await db.run(sql`INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits)
      VALUES (${role}, ${device}, ${pick(4) === 0 ? 1 : 0}, ${reads}, '[]') ON CONFLICT DO NOTHING`);
    return `monitors r${role} d${device}`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'monitors', pick);
    if (id !== undefined) await db.run(sql`UPDATE monitors SET reads = ${JSON.stringify(['d', 'e'].slice(pick(3)))}, monitor_management = ${pick(2)} WHERE id = ${id}`);
    return `update monitors ${id}`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'monitors', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM monitors WHERE id = ${id}`);
    return `delete monitors ${id}`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'roles', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM roles WHERE id = ${id}`);
    return `delete role ${id} (its manages, members and monitors go with it)`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'devices', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM devices WHERE id = ${id}`);
    return `delete device ${id} (its monitors go with it)`;
  },
  async (db, pick) => {
    const id = await anyOf(db, 'users', pick);
    if (id !== undefined) await db.run(sql`DELETE FROM users WHERE id = ${id}`);
    return `delete user ${id} (its members go with it)`;
  },
];

async function agree(db: Db, users: readonly number[], pick: (n: number) => number, ctx: string): Promise<void> {
  const devices = await ids(db, 'devices');
  for (const u of users) {
    // single devices' access first, while this user's kept set (if any) is of an earlier version: answered from the
    // kept single accesses of the last step, which must have been dropped with their version
    const some = [...Array.from({ length: 5 }, () => devices[pick(Math.max(devices.length, 1))] ?? 1), 999_999];
    for (const walks of [0, 32]) {
      const kept = await engine.deviceAccesses(db, u, some, walks);
      for (const id of some) {
        assert.deepEqual(shape([kept.get(id)!]), shape([await engine.deviceAccess(db, u, id)]), `${ctx}: u${u} device ${id} (${walks} walks)`);
      }
    }
    const fresh = await engine.readableDevices(db, u);
    assert.deepEqual(shape(await engine.allReadableDevices(db, u)), shape(fresh), `${ctx}: readable set of u${u}`);
    // narrowed answers from the cached set: an id list (with unknown ids and repeats) and a page start
    const only = [...Array.from({ length: 4 }, () => devices[pick(Math.max(devices.length, 1))] ?? 1), 999_999, devices[0] ?? 1];
    const after = devices[pick(Math.max(devices.length, 1))] ?? 0;
    assert.deepEqual(shape(await engine.readableDevicesOf(db, u, only)), shape(await engine.readableDevices(db, u, [...new Set(only)])), `${ctx}: u${u} ids ${only}`);
    assert.deepEqual(shape(await engine.readableDevicesOf(db, u, undefined, after)), shape(fresh.filter((a) => a.deviceId > after)), `${ctx}: u${u} after ${after}`);
    assert.deepEqual(shape(await engine.readableDevicesOf(db, u, only, after)), shape(await engine.readableDevices(db, u, [...new Set(only)], after)), `${ctx}: u${u} ids ${only} after ${after}`);
    // and from the kept set, now current
    const fromSet = await engine.deviceAccesses(db, u, some, 0);
    for (const id of some) assert.deepEqual(shape([fromSet.get(id)!]), shape([await engine.deviceAccess(db, u, id)]), `${ctx}: u${u} device ${id} from the kept set`);
  }
}

test(`cached readable sets equal a fresh walk after every random change of rights (${SEEDS} installations × ${STEPS} changes)`, async () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const inst = randomInstallation(seed, { roles: 12 + (seed % 20), users: 6, devices: 25 });
    const db = await loadInstallation(inst);
    const rand = mulberry32(seed ^ 0xcac4e);
    const pick = (n: number) => Math.floor(rand() * n);
    const users = inst.users.map((u) => u.id);
    try {
      await agree(db, users, pick, `seed ${seed}, as loaded`);
      for (let step = 1; step <= STEPS; step++) {
        const did = await CHANGES[pick(CHANGES.length)]!(db, pick);
        await agree(db, users, pick, `seed ${seed}, step ${step} after ${did}`);
      }
    } finally {
      await db.close();
    }
  }
});

test('while rights do not change the cached set answers (the same array), and writes elsewhere do not drop it', async () => {
  const inst = randomInstallation(4242, { roles: 20, users: 3, devices: 40, rooted: true });
  const db = await loadInstallation(inst);
  try {
    const u = inst.members[0]!.userId;
    const first = await engine.allReadableDevices(db, u);
    assert.ok(first.length > 0, 'the user reads devices');
    assert.equal(await engine.allReadableDevices(db, u), first, 'answered from the cache');
    // devices, roles' names and users' data are not part of a readable set
    await db.run(sql`UPDATE devices SET properties = '{"x":1}', last_update = 5`);
    await db.run(sql`UPDATE roles SET name = 'renamed'`);
    await db.run(sql`UPDATE users SET email = email || '.x'`);
    assert.equal(await engine.allReadableDevices(db, u), first, 'still answered from the cache');
    // a change of rights anywhere, even for another user, is a new version
    await db.run(sql`DELETE FROM monitors WHERE id = (SELECT max(id) FROM monitors)`);
    const second = await engine.allReadableDevices(db, u);
    assert.notEqual(second, first, 'computed again');
    assert.equal(await engine.allReadableDevices(db, u), second);
  } finally {
    await db.close();
  }
});

test('single devices\' access is kept while rights do not change, and walked again after any change of rights', async () => {
  const inst = randomInstallation(777, { roles: 15, users: 3, devices: 30, rooted: true });
  const db = await loadInstallation(inst);
  try {
    const u = inst.members[0]!.userId;
    const device = (await ids(db, 'devices'))[3]!;
    const first = (await engine.deviceAccesses(db, u, [device], 4)).get(device)!;
    assert.equal((await engine.deviceAccesses(db, u, [device], 4)).get(device), first, 'answered from what was kept');
    await db.run(sql`UPDATE devices SET properties = '{"x":1}'`);
    assert.equal((await engine.deviceAccesses(db, u, [device], 4)).get(device), first, 'a write that is not about rights keeps it');
    await db.run(sql`UPDATE monitors SET reads = '["z"]' WHERE device_id = ${device}`);
    const second = (await engine.deviceAccesses(db, u, [device], 4)).get(device)!;
    assert.notEqual(second, first, 'walked again');
    assert.deepEqual(shape([second]), shape([await engine.deviceAccess(db, u, device)]));
  } finally {
    await db.close();
  }
});
