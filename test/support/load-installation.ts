// Loads a generated installation (test/support/random-installation.ts) into a migrated database, ids preserved: one
// database per test process, emptied before each installation (migrating a fresh one for each of the oracle's
// thousands of installations took a seventh of its time). On the PostgreSQL run of the suite
// (GRIDKEEPER_TEST_BACKEND=postgres) that database is on the server: the oracle tests then check the recursive CTEs on
// PostgreSQL too.
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { freshPostgres, testBackend } from './postgres.ts';
import { migrate } from '../../src/db/migrate.ts';
import { RIGHTS, RIGHT_COLUMN } from '../../src/access/rights.ts';
import type { Installation, Flags6 } from './random-installation.ts';

const flagColumns = (flags: Flags6, prefix = '') =>
  Object.fromEntries(RIGHTS.map((r) => [`${prefix}${RIGHT_COLUMN[r]}`, flags[r] ? 1 : 0]));

// DELETE, not TRUNCATE: the installations are small, and TRUNCATE makes new files for every table it empties on
// PostgreSQL (~130 ms each time; the oracle loads hundreds)
const EMPTY = 'DELETE FROM monitors; DELETE FROM members; DELETE FROM manages; DELETE FROM devices; DELETE FROM users; DELETE FROM roles';

let shared: Promise<{ db: Db; drop(): Promise<void> }> | undefined;

async function loadIntoPostgres(inst: Installation): Promise<Db> {
  shared ??= freshPostgres().then((fresh) => {
    process.once('beforeExit', () => { void fresh.drop(); });
    return fresh;
  });
  const { db } = await shared;
  await db.tx(async (tx) => {
    await tx.script(EMPTY);
    const rows = async (table: string, list: Record<string, unknown>[]) => {
      for (let i = 0; i < list.length; i += 500) {
        await tx.run(sql`INSERT INTO ${sql.table(table)} ${sql.raw(`(${Object.keys(list[0]).join(', ')})`)} VALUES ${sql.join(
          list.slice(i, i + 500).map((r) => sql`(${sql.join(Object.values(r))})`))}`);
      }
    };
    if (inst.roles.length) await rows('roles', inst.roles.map((r) => ({ id: r.id, name: `r${r.id}`, ...flagColumns(r.selfRights, 'self_'), created_at: 0 })));
    if (inst.manages.length) await rows('manages', inst.manages.map((m) => ({ id: m.id, parent_role_id: m.parentRoleId, child_role_id: m.childRoleId, ...flagColumns(m.flags) })));
    if (inst.users.length) await rows('users', inst.users.map((u) => ({ id: u.id, email: `u${u.id}@test`, password_hash: 'x', password_changed_at: 0, created_at: 0 })));
    if (inst.members.length) await rows('members', inst.members.map((m) => ({ id: m.id, role_id: m.roleId, user_id: m.userId })));
    if (inst.devices.length) await rows('devices', inst.devices.map((d) => ({ id: d.id, properties: '{}', last_update: 0, created_at: 0 })));
    if (inst.monitors.length) {
      await rows('monitors', inst.monitors.map((m) => ({
        id: m.id, role_id: m.roleId, device_id: m.deviceId, monitor_management: m.monitorManagement ? 1 : 0, reads: JSON.stringify(m.reads), edits: JSON.stringify(m.edits),
      })));
    }
  });
  // the database is kept for the next installation: closing this handle closes nothing
  return Object.assign(Object.create(db) as Db, { close: async () => {} });
}

let sharedSqlite: Promise<Db> | undefined;

async function loadIntoSqlite(inst: Installation): Promise<Db> {
  sharedSqlite ??= (async () => {
    const db = openDatabase({ file: ':memory:' });
    process.once('beforeExit', () => { void db.close(); });
    await migrate(db, 0);
    return db;
  })();
  const db = await sharedSqlite;
  await db.exclusive(({ sqlite }) => {
    const insertRole = sqlite.prepare(`INSERT INTO roles (id, name, ${RIGHTS.map((r) => `self_${RIGHT_COLUMN[r]}`).join(', ')}, created_at)
      VALUES (@id, @name, ${RIGHTS.map((r) => `@self_${RIGHT_COLUMN[r]}`).join(', ')}, 0)`);
    const insertManages = sqlite.prepare(`INSERT INTO manages (id, parent_role_id, child_role_id, ${RIGHTS.map((r) => RIGHT_COLUMN[r]).join(', ')})
      VALUES (@id, @parent, @child, ${RIGHTS.map((r) => `@${RIGHT_COLUMN[r]}`).join(', ')})`);
    const insertUser = sqlite.prepare(`INSERT INTO users (id, email, password_hash, password_changed_at, created_at) VALUES (?, ?, 'x', 0, 0)`);
    const insertMember = sqlite.prepare('INSERT INTO members (id, role_id, user_id) VALUES (?, ?, ?)');
    const insertDevice = sqlite.prepare(`INSERT INTO devices (id, properties, last_update, created_at) VALUES (?, '{}', 0, 0)`);
    const insertMonitor = sqlite.prepare('INSERT INTO monitors (id, role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?, ?)');
    sqlite.transaction(() => {
      sqlite.exec(EMPTY);
      for (const r of inst.roles) insertRole.run({ id: r.id, name: `r${r.id}`, ...flagColumns(r.selfRights, 'self_') });
      for (const m of inst.manages) insertManages.run({ id: m.id, parent: m.parentRoleId, child: m.childRoleId, ...flagColumns(m.flags) });
      for (const u of inst.users) insertUser.run(u.id, `u${u.id}@test`);
      for (const m of inst.members) insertMember.run(m.id, m.roleId, m.userId);
      for (const d of inst.devices) insertDevice.run(d.id);
      for (const m of inst.monitors) insertMonitor.run(m.id, m.roleId, m.deviceId, m.monitorManagement ? 1 : 0, JSON.stringify(m.reads), JSON.stringify(m.edits));
    })();
  });
  // the database is kept for the next installation: closing this handle closes nothing
  return Object.assign(Object.create(db) as Db, { close: async () => {} });
}

export function loadInstallation(inst: Installation): Promise<Db> {
  return testBackend() === 'postgres' ? loadIntoPostgres(inst) : loadIntoSqlite(inst);
}
