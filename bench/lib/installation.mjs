// A large, deterministic installation shaped like a real hierarchy, written straight into a migrated gridkeeper database
// (root role 1 must exist). Reusable by any benchmark: pass an open better-sqlite3 handle (or a file path) and a seed.
//
//   level 0   root (1)
//   level 1   4 distributors        root -> distributor carries every flag
//   level 2   40 installers         distributor -> installer: role, user and device management
//   level 3   400 customers         installer -> customer: mostly role/user/device management
//   level 4+  sites, buildings, floors, zones, ... down to level 12 (9,555 roles), random flags
// Every role below level 2 has one primary parent on the level above; 8% get a second parent one or two levels up
// (a service company that manages a site too), so the graph is a DAG with diamonds, not a tree.
// Devices: 100,000, each with two monitors relations (200,000): one with monitorManagement on a role of level >= 4 (the
// site that owns it) and one on a role of level 2 or 3 (an installer or customer) with property-level reads/edits (a
// fifth of those with monitorManagement too).
// Users: one member per role of levels 1..3 (445), the rest (to `users`) members of random roles of level >= 4.
// Same seed and sizes -> the same database.
import Database from 'better-sqlite3';

export const DEFAULT_LEVELS = [4, 40, 400, 1600, 2200, 1900, 1400, 1000, 700, 450, 250, 55]; // + root = 10,000 roles
const NODE_TYPES = ['smartgridController', 'powerMeter', 'solarInverter', 'battery', 'evCharger', 'hybridInverter', 'heatPump'];
export const BENCH_PROPERTIES = ['name', 'nodeType', 'isActive', 'info', 'power', 'location'];
const GRANTS = [
  { reads: ['name', 'nodeType', 'isActive'], edits: ['name'] },
  { reads: ['name', 'info'], edits: [] },
  { reads: ['nodeType'], edits: ['power', 'location'] },
  { reads: [], edits: ['name', 'isActive'] },
];

/** Floats in [0, 1) from the seed, mixed first. */
const rng = (seed) => mulberry32(seed ^ 0x9e3779b9);

/** Property object of device `id` (~250 bytes of JSON). */
export function benchDeviceProperties(id) {
  const nodeType = NODE_TYPES[id % NODE_TYPES.length];
  return {
    nodeId: `dev-${id}`, nodeType, isActive: id % 10 !== 0, name: `${nodeType} ${id}`, power: id % 5000,
    info: { manufacturer: 'Acme', model: `M-${id % 97}`, serialNumber: `SN${String(id).padStart(8, '0')}` },
    location: { lat: 50.85 + (id % 100) / 1000, lon: 4.35 + (id % 77) / 1000 },
  };
}

/**
 * @param {import('better-sqlite3').Database | string} target  an open handle (left open) or a database file
 * @param {{ seed?: number, levels?: number[], devices?: number, users?: number }} [size]
 * @returns the layout: role ids per level, primary parent of every role, the owning role of every device, the users
 */
export function writeRoleInstallation(target, { seed = 1, levels = DEFAULT_LEVELS, devices = 100_000, users = 2_000 } = {}) {
  const db = typeof target === 'string' ? new Database(target) : target;
  const rand = rng(seed);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const bit = (p) => (rand() < p ? 1 : 0);
  const rightCols = 'role_management, user_management, view_management, device_management, report_management, alarm_management';
  const insertRole = db.prepare(`INSERT INTO roles (id, name, self_role_management, self_user_management, self_view_management,
    self_device_management, self_report_management, self_alarm_management, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)`);
  const insertManages = db.prepare(`INSERT INTO manages (parent_role_id, child_role_id, ${rightCols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertUser = db.prepare(`INSERT INTO users (email, password_hash, password_changed_at, created_at) VALUES (?, 'x', 0, 0)`);
  const insertMember = db.prepare('INSERT INTO members (role_id, user_id) VALUES (?, ?)');
  const insertDevice = db.prepare('INSERT INTO devices (id, properties, last_update, created_at) VALUES (?, ?, ?, 0)');
  const insertMonitors = db.prepare('INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?)');

  /** flag probabilities of a relation into a role of level L: [role, user, view, device, report, alarm] */
  const flagP = (level) => (level === 1 ? [1, 1, 1, 1, 1, 1]
    : level === 2 ? [1, 1, 0.5, 1, 0.5, 0.5]
      : level === 3 ? [0.7, 0.7, 0.3, 0.9, 0.3, 0.3]
        : [0.2, 0.2, 0.2, 0.2, 0.2, 0.2]);

  const byLevel = [[1]];
  const parentOf = new Int32Array(1 + levels.reduce((a, b) => a + b, 0) + 1);
  let nextRole = db.prepare('SELECT coalesce(max(id), 1) FROM roles').pluck().get() + 1;
  if (nextRole !== 2) throw new Error('writeRoleInstallation expects a fresh database holding only the root role');
  const layout = { byLevel, parentOf, ownerOfDevice: new Int32Array(devices + 1), users: [], relations: 0, monitors: 0, devices };

  db.transaction(() => {
    for (let L = 1; L <= levels.length; L++) {
      const here = [];
      for (let i = 0; i < levels[L - 1]; i++) {
        const id = nextRole++;
        const self = L >= 4 ? Array.from({ length: 6 }, () => bit(0.1)) : [0, 0, 0, 0, 0, 0];
        insertRole.run(id, `L${L}-${i}`, ...self);
        const parent = pick(byLevel[L - 1]);
        parentOf[id] = parent;
        insertManages.run(parent, id, ...flagP(L).map(bit));
        layout.relations++;
        if (L >= 3 && rand() < 0.08) {
          const up = L >= 4 && rand() < 0.5 ? byLevel[L - 2] : byLevel[L - 1];
          const second = pick(up);
          if (second !== parent) { insertManages.run(second, id, ...flagP(L).map(bit)); layout.relations++; }
        }
        here.push(id);
      }
      byLevel.push(here);
    }
    const deep = byLevel.slice(4).flat();
    const middle = [...byLevel[2], ...byLevel[3]];
    for (let d = 1; d <= devices; d++) {
      insertDevice.run(d, JSON.stringify(benchDeviceProperties(d)), 1_767_225_600_000 + d);
      const owner = pick(deep);
      layout.ownerOfDevice[d] = owner;
      insertMonitors.run(owner, d, 1, '[]', '[]');
      const grant = pick(GRANTS);
      insertMonitors.run(pick(middle), d, bit(0.2), JSON.stringify(grant.reads), JSON.stringify(grant.edits));
      layout.monitors += 2;
    }
    const top = [...byLevel[1], ...byLevel[2], ...byLevel[3]];
    for (let i = 0; i < users; i++) {
      const roleId = i < top.length ? top[i] : pick(deep);
      const userId = Number(insertUser.run(`user${i}@bench.test`).lastInsertRowid);
      insertMember.run(roleId, userId);
      layout.users.push({ id: userId, roleId, level: levelOf(byLevel, roleId) });
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  if (typeof target === 'string') db.close();
  layout.roles = nextRole - 1;
  return layout;
}

/** Roles are numbered level by level from 1 (root), so the level of an id is a lookup. */
export function levelOf(byLevel, roleId) {
  let first = 1;
  for (let L = 0; L < byLevel.length; L++) {
    if (roleId < first + byLevel[L].length) return L;
    first += byLevel[L].length;
  }
  return -1;
}

/** Walks primary parents from `roleId` up to `level` (0 = root). */
export function ancestorAtLevel(layout, roleId, level) {
  let id = roleId;
  while (levelOf(layout.byLevel, id) > level) id = layout.parentOf[id];
  return id;
}
