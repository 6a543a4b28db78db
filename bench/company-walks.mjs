// Issue 17 figures on the 10,000-role / 100,000-device installation of bench/lib/installation.mjs, with every
// level-1 (distributor) and level-2 (installer) role marked as a company:
//  (a) GET /v1/company's walk (memberCompanies) for users at every level: p50/p99 in process;
//  (b) the companyId filter pieces for one distributor company: visibleCompanyIds, descendantsOf (the roles the
//      company manages), devicesMonitoredByCompanies; and the whole device selection for a skipHash (selectionHash) of the root
//      member with and without companyId, and of a distributor member with its own company;
//  EXPLAIN QUERY PLAN of the company walks, flagging any full scan of a table. In process, about half a minute.
// Run: node --import ./test/support/register.mjs bench/company-walks.mjs   (SEED=, RUNS=, SELECT_RUNS= to vary)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/boot/runtime.ts';
import { parseConfig } from '../src/lib/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import {
  companiesManaging, descendantsOf, devicesMonitoredByCompanies, memberCompanies, visibleCompanyIds,
} from '../src/access/companies.ts';
import { devicesJson, selectionHash } from '../src/devices/device-query.ts';
import { writeRoleInstallation } from './lib/installation.mjs';
import { percentile } from './lib/load.mjs';
import { queryPlan, recordStatements } from './lib/query-plans.mjs';

const SEED = Number(process.env.SEED ?? 1);
const RUNS = Number(process.env.RUNS ?? 2000);
const SELECT_RUNS = Number(process.env.SELECT_RUNS ?? 10); // whole device selections (seconds each at 100k devices)
const ms = (n) => `${n.toFixed(n < 1 ? 3 : 1)} ms`;

/** fn is async (every store call is): each call is awaited inside its timed span. */
async function time(runs, fn) {
  for (let i = 0; i < Math.min(50, runs); i++) await fn(i);
  const times = new Float64Array(runs);
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
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
    const found = (await memberCompanies(db, ids[0])).length;
    console.log(`(a) memberCompanies, users of level ${level} (${ids.length} users, e.g. ${found} companies): ${await time(RUNS, (i) => memberCompanies(db, ids[i % ids.length]))}`);
  }

  const distributor = layout.byLevel[1][0];
  const distributorUser = layout.users.find((u) => u.roleId === distributor)?.id;
  const admin = 1;
  const managed = await descendantsOf(db, [distributor]);
  const monitored = await devicesMonitoredByCompanies(db, [distributor]);
  console.log(`(b) distributor company ${distributor}: manages ${managed.size} roles, monitors ${monitored.size} devices`);
  console.log(`    visibleCompanyIds (root member): ${await time(RUNS, () => visibleCompanyIds(db, admin, [distributor]))}`);
  console.log(`    descendantsOf (roles the company manages): ${await time(200, () => descendantsOf(db, [distributor]))}`);
  console.log(`    devicesMonitoredByCompanies: ${await time(100, () => devicesMonitoredByCompanies(db, [distributor]))}`);
  console.log(`    companiesManaging (deep role): ${await time(RUNS, (i) => companiesManaging(db, companies, [layout.byLevel[8][i % layout.byLevel[8].length]]))}`);
  // the count from the listing once; the timing is the selection a skipHash poll makes
  const count = async (userId, query) => JSON.parse(Buffer.concat((await devicesJson(db, userId, query)).parts()).toString()).device.length;
  const sel = (userId, query) => selectionHash(db, userId, query);
  console.log(`    selectionHash root member, all (${await count(admin, {})} devices): ${await time(SELECT_RUNS, () => sel(admin, {}))}`);
  console.log(`    selectionHash root member, companyId (${await count(admin, { companyId: [distributor] })} devices): ${await time(SELECT_RUNS, () => sel(admin, { companyId: [distributor] }))}`);
  if (distributorUser) {
    console.log(`    selectionHash distributor member, own companyId (${await count(distributorUser, { companyId: [distributor] })} devices): ${await time(SELECT_RUNS, () => sel(distributorUser, { companyId: [distributor] }))}`);
  }

  // plans of the statements the walks really run (compiled as src/db/open.ts compiles them, with their parameters)
  const walks = [
    ['memberCompanies', (db) => memberCompanies(db, layout.users[layout.users.length - 1].id)],
    ['devicesMonitoredByCompanies', (db) => devicesMonitoredByCompanies(db, [distributor])],
  ];
  for (const [name, walk] of walks) {
    for (const [sqlText, params] of await recordStatements(db, walk)) {
      const steps = queryPlan(db, sqlText, params).map((r) => r.detail);
      const scans = steps.filter((d) => /^SCAN (roles|manages|members|monitors|devices)\b/.test(d));
      console.log(`plan ${name}: ${scans.length ? `FULL SCAN ${scans.join('; ')}` : 'index seeks only'}`);
    }
  }
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
