// Loads a generated installation (test/support/random-installation.ts) into a migrated database, ids preserved.
import { openDatabase, type Db } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { RIGHTS, RIGHT_COLUMN } from '../../src/access/rights.ts';
import type { Installation, Flags6 } from './random-installation.ts';

const flagColumns = (flags: Flags6, prefix = '') =>
  Object.fromEntries(RIGHTS.map((r) => [`${prefix}${RIGHT_COLUMN[r]}`, flags[r] ? 1 : 0]));

export async function loadInstallation(inst: Installation, db: Db = openDatabase({ file: ':memory:' })): Promise<Db> {
  await migrate(db, 0);
  return db.exclusive(({ sqlite }) => {
  const insertRole = sqlite.prepare(`INSERT INTO roles (id, name, ${RIGHTS.map((r) => `self_${RIGHT_COLUMN[r]}`).join(', ')}, created_at)
    VALUES (@id, @name, ${RIGHTS.map((r) => `@self_${RIGHT_COLUMN[r]}`).join(', ')}, 0)`);
  const insertManages = sqlite.prepare(`INSERT INTO manages (id, parent_role_id, child_role_id, ${RIGHTS.map((r) => RIGHT_COLUMN[r]).join(', ')})
    VALUES (@id, @parent, @child, ${RIGHTS.map((r) => `@${RIGHT_COLUMN[r]}`).join(', ')})`);
  const insertUser = sqlite.prepare(`INSERT INTO users (id, email, password_hash, password_changed_at, created_at) VALUES (?, ?, 'x', 0, 0)`);
  const insertMember = sqlite.prepare('INSERT INTO members (id, role_id, user_id) VALUES (?, ?, ?)');
  const insertDevice = sqlite.prepare(`INSERT INTO devices (id, properties, last_update, created_at) VALUES (?, '{}', 0, 0)`);
  const insertMonitor = sqlite.prepare('INSERT INTO monitors (id, role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?, ?)');
  sqlite.transaction(() => {
    for (const r of inst.roles) insertRole.run({ id: r.id, name: `r${r.id}`, ...flagColumns(r.selfRights, 'self_') });
    for (const m of inst.manages) insertManages.run({ id: m.id, parent: m.parentRoleId, child: m.childRoleId, ...flagColumns(m.flags) });
    for (const u of inst.users) insertUser.run(u.id, `u${u.id}@test`);
    for (const m of inst.members) insertMember.run(m.id, m.roleId, m.userId);
    for (const d of inst.devices) insertDevice.run(d.id);
    for (const m of inst.monitors) insertMonitor.run(m.id, m.roleId, m.deviceId, m.monitorManagement ? 1 : 0, JSON.stringify(m.reads), JSON.stringify(m.edits));
  })();
  return db;
  });
}
