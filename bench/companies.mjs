// Issue 17 figures on the 10,000-role / 100,000-device installation of bench/lib/installation.mjs, with every
// level-1 (distributor) and level-2 (installer) role marked as a company:
//  (a) GET /v1/company's walk (memberCompanies) for users at every level: p50/p99 in process;
//  (b) the companyId filter pieces for one distributor company: visibleCompanyIds, rolesManagedByCompanies,
//      devicesMonitoredByCompanies; and the whole device selection (selectDevices) of the root member with and without
//      companyId, and of a distributor member with its own company;
//  EXPLAIN QUERY PLAN of the company walks, flagging any full scan of a table. In process, about half a minute.
// Run: node --import ./test/support/register.mjs bench/companies.mjs   (SEED=, RUNS= to vary)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/runtime.ts';
import { parseConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import {
  companiesManaging, devicesMonitoredByCompanies, memberCompanies, rolesManagedByCompanies, visibleCompanyIds,
} from '../src/access/companies.ts';
import { selectDevices } from '../src/devices/device-query.ts';
import { writeRoleInstallation } from './lib/installation.mjs';
import { percentile } from './lib/load.mjs';

const SEED = Number(process.env.SEED ?? 1);
const RUNS = Number(process.env.RUNS ?? 2000);
const ms = (n) => `${n.toFixed(n < 1 ? 3 : 1)} ms`;

function time(runs, fn) {
  for (let i = 0; i < Math.min(50, runs); i++) fn(i);
  const times = new Float64Array(runs);
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn(i);
    times[i] = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  times.sort();
  return `p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}`;
}

const dir = mkdtempSync(join(tmpdir(), 'gridkeeper-bench-companies-'));
try {
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: 'bench-admin-password-1', GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_LOG: 'error' }, []);
  const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
  await createDeps({ config, db, log: createLogger('error') });
  const layout = writeRoleInstallation(db.sqlite, { seed: SEED });
  const companies = [...layout.byLevel[1], ...layout.byLevel[2]];
  const mark = db.sqlite.prepare('UPDATE roles SET is_company = 1, uuid = ? WHERE id = ?');
  db.sqlite.transaction(() => { for (const id of companies) mark.run(crypto.randomUUID(), id); })();
  console.log(`installation (seed ${SEED}): ${layout.roles} roles, ${layout.devices} devices, ${companies.length} companies (levels 1 and 2)`);

  const byLevel = new Map();
  for (const u of layout.users) byLevel.set(u.level, [...(byLevel.get(u.level) ?? []), u.id]);
  for (const [level, ids] of [...byLevel].sort((a, b) => a[0] - b[0])) {
    const found = memberCompanies(db, ids[0]).length;
    console.log(`(a) memberCompanies, users of level ${level} (${ids.length} users, e.g. ${found} companies): ${time(RUNS, (i) => memberCompanies(db, ids[i % ids.length]))}`);
  }

  const distributor = layout.byLevel[1][0];
  const distributorUser = layout.users.find((u) => u.roleId === distributor)?.id;
  const admin = 1;
  const managed = rolesManagedByCompanies(db, [distributor]);
  const monitored = devicesMonitoredByCompanies(db, [distributor]);
  console.log(`(b) distributor company ${distributor}: manages ${managed.size} roles, monitors ${monitored.size} devices`);
  console.log(`    visibleCompanyIds (root member): ${time(RUNS, () => visibleCompanyIds(db, admin, [distributor]))}`);
  console.log(`    rolesManagedByCompanies: ${time(200, () => rolesManagedByCompanies(db, [distributor]))}`);
  console.log(`    devicesMonitoredByCompanies: ${time(100, () => devicesMonitoredByCompanies(db, [distributor]))}`);
  console.log(`    companiesManaging (deep role): ${time(RUNS, (i) => companiesManaging(db, companies, [layout.byLevel[8][i % layout.byLevel[8].length]]))}`);
  const sel = (userId, query) => selectDevices(db, userId, query, true).devices.length;
  console.log(`    selectDevices root member, all (${sel(admin, {})} devices): ${time(10, () => sel(admin, {}))}`);
  console.log(`    selectDevices root member, companyId (${sel(admin, { companyId: [distributor] })} devices): ${time(10, () => sel(admin, { companyId: [distributor] }))}`);
  if (distributorUser) {
    console.log(`    selectDevices distributor member, own companyId (${sel(distributorUser, { companyId: [distributor] })} devices): ${time(10, () => sel(distributorUser, { companyId: [distributor] }))}`);
  }

  const plans = [
    ['memberCompanies', `WITH RECURSIVE up(id) AS (SELECT role_id FROM members WHERE user_id = 5 UNION SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id)
      SELECT r.id FROM up JOIN roles r ON r.id = up.id WHERE r.is_company = 1`],
    ['devicesMonitoredByCompanies', `WITH RECURSIVE down(id) AS (SELECT value FROM json_each('[2]') UNION SELECT m.child_role_id FROM manages m JOIN down ON m.parent_role_id = down.id)
      SELECT DISTINCT mo.device_id FROM down JOIN monitors mo ON mo.role_id = down.id`],
  ];
  for (const [name, sqlText] of plans) {
    const steps = db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sqlText}`).all().map((r) => r.detail);
    const scans = steps.filter((d) => /^SCAN (roles|manages|members|monitors|devices)\b/.test(d));
    console.log(`plan ${name}: ${scans.length ? `FULL SCAN ${scans.join('; ')}` : 'index seeks only'}`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
