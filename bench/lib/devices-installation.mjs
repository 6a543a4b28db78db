// A large, deterministic installation written straight into a migrated gridkeeper database (ids preserved):
//
//   root (1) ──all flags──> company_k (k = 1..C) ──deviceManagement──> site_k_s (s = 1..S)
//                                               └──(no flags)────────> readers_k
//
// Each company owns D devices; device i of company k has two monitors relations:
//   (site_k_(i mod S), device, monitorManagement)                        — the operator's relation
//   (readers_k, device, reads [name, nodeType, isActive], edits [name])  — property-level rights only
// Defaults: C = 10, S = 998, D = 10,000 -> 10,001 roles, 100,000 devices, 200,000 monitors relations.
// A member of company_k reads its 10,000 devices with monitorManagement; a member of readers_k reads the same
// 10,000 devices with three readable properties and one editable. Same arguments -> the same database.
import Database from 'better-sqlite3';

const NODE_TYPES = ['smartgridController', 'powerMeter', 'solarInverter', 'battery', 'evCharger', 'hybridInverter', 'heatPump'];
const MANUFACTURERS = ['Acme', 'Volta', 'Sunbeam', 'GridCo', 'Helios'];

/** Property object of device `id` (about 400 bytes of JSON, like a real device). */
export function deviceProperties(id, company) {
  const nodeType = NODE_TYPES[id % NODE_TYPES.length];
  const nodeId = `c${company}-dev-${id}`;
  return {
    nodeId,
    nodeType,
    isActive: id % 10 !== 0,
    name: `${nodeType} ${id}`,
    info: { manufacturer: MANUFACTURERS[id % MANUFACTURERS.length], model: `M-${id % 97}`, serialNumber: `SN${String(id).padStart(8, '0')}` },
    nodeParentsIds: [`c${company}-site-${id % 50}`],
    nodeChildrenIds: [],
    nodeInfluxSeries: [{ measurement: 'metrics', database: 'beauvent', retentionPolicy: 'rp_one_s', tags: { nodeId }, fields: ['power', 'energy'] }],
    installationDate: '2025-06-01',
    location: { lat: 50.85 + (id % 100) / 1000, lon: 4.35 + (id % 77) / 1000 },
  };
}

/**
 * Fills the database file (already migrated, with root role 1). Returns the role ids a benchmark needs.
 * @param {string} file
 * @param {{ companies?: number, sitesPerCompany?: number, devicesPerCompany?: number }} [size]
 */
export function writeDevicesInstallation(file, { companies = 10, sitesPerCompany = 998, devicesPerCompany = 10_000 } = {}) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF'); // a bulk load of a scratch database: durability is not the point here
  db.pragma('foreign_keys = ON');
  const insertRole = db.prepare(`INSERT INTO roles (id, name, self_role_management, self_user_management, self_view_management,
    self_device_management, self_report_management, self_alarm_management, created_at) VALUES (?, ?, 0, 0, 0, 0, 0, 0, 0)`);
  const insertManages = db.prepare(`INSERT INTO manages (parent_role_id, child_role_id, role_management, user_management,
    view_management, device_management, report_management, alarm_management) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertDevice = db.prepare('INSERT INTO devices (id, properties, last_update, created_at) VALUES (?, ?, ?, ?)');
  const insertMonitors = db.prepare('INSERT INTO monitors (role_id, device_id, monitor_management, reads, edits) VALUES (?, ?, ?, ?, ?)');
  const readerGrant = [JSON.stringify(['name', 'nodeType', 'isActive']), JSON.stringify(['name'])];
  const layout = { companyRoles: [], readersRoles: [], siteRoles: [], devices: 0, monitors: 0, roles: 1 };
  const t0 = Date.UTC(2026, 0, 1);
  let roleId = 1;
  let deviceId = 0;
  db.transaction(() => {
    for (let k = 1; k <= companies; k++) {
      const company = ++roleId;
      insertRole.run(company, `company ${k}`);
      insertManages.run(1, company, 1, 1, 1, 1, 1, 1);
      const readers = ++roleId;
      insertRole.run(readers, `readers ${k}`);
      insertManages.run(company, readers, 0, 0, 0, 0, 0, 0);
      const sites = [];
      for (let s = 1; s <= sitesPerCompany; s++) {
        const site = ++roleId;
        insertRole.run(site, `site ${k}.${s}`);
        insertManages.run(company, site, 0, 0, 0, 1, 0, 0);
        sites.push(site);
      }
      for (let i = 0; i < devicesPerCompany; i++) {
        const id = ++deviceId;
        insertDevice.run(id, JSON.stringify(deviceProperties(id, k)), t0 + id, t0);
        insertMonitors.run(sites[i % sites.length], id, 1, '[]', '[]');
        insertMonitors.run(readers, id, 0, readerGrant[0], readerGrant[1]);
        layout.monitors += 2;
      }
      layout.companyRoles.push(company);
      layout.readersRoles.push(readers);
      layout.siteRoles.push(sites[0]);
    }
  })();
  layout.devices = deviceId;
  layout.roles = roleId;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  db.close();
  return layout;
}
