// Profiles the history queries in-process: DAYS days of DEVICES devices, sealed, then each query timed (median of RUNS).
// On an SQLite file, or with BACKEND=postgres on a fresh database of this machine's PostgreSQL. The charge of each query
// is made against a clock one hour further per query, so the bucket never refuses a run. QUERIES=last,spread picks some.
// PROFILE=file.cpuprofile writes a CPU profile of the timed queries only.
// Run: node --import ./test/support/register.mjs bench/telemetry/prof-history.mjs
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/boot/app.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openDatabase } from '../../src/db/open.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { benchDatabase } from '../lib/postgres.mjs';
import { addonFile } from '../../src/db/native.ts';
import { sealDue } from '../../src/telemetry/seal.ts';
import { historyDataset } from '../lib/history-dataset.mjs';

const DAY = 86_400_000;
const DAYS = Number(process.env.DAYS ?? 30);
const DEVICES = Number(process.env.DEVICES ?? 2);
const RUNS = Number(process.env.RUNS ?? 9);
const PASSWORD = 'prof-password-1';
const endOfData = Math.floor(Date.now() / DAY) * DAY - DAY;
const data = historyDataset({ devices: DEVICES, days: DAYS, startMs: endOfData - DAYS * DAY });
const dir = mkdtempSync(join(tmpdir(), 'gk-prof-'));
const pgDb = process.env.BACKEND === 'postgres' ? await benchDatabase('gk_prof_history') : undefined;
const db = pgDb ? openPostgres({ url: pgDb.url }) : openDatabase({ file: join(dir, 'gridkeeper.db'), addonFile: addonFile(dir) });
const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: dir,
  ...(pgDb ? { GRIDKEEPER_DATABASE_URL: pgDb.url } : {}) }, []);
const { deps } = await createDeps({ config, db, log: createLogger('error'), now: () => Date.now() });
const limiter = deps.rateLimiter;
let skew = 0;
deps.rateLimiter = { ...limiter, admitAndCharge: (ip, key, policy, cost, now) => limiter.admitAndCharge(ip, key, policy, cost, now + (skew += 3_600_000)) };
const { app } = createApp(deps);
const call = async (method, path, body, token) => {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
  const res = await app.request(path, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) },
    { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
  return { status: res.status, text: await res.text() };
};
const refresh = (await call('POST', '/auth/login', { username: 'admin@localhost', password: PASSWORD })).text;
const token = (await call('GET', '/auth/accesstoken', undefined, refresh)).text;
await call('PUT', '/v1/user/admin@localhost/tier', { tier: 'premium' }, token);
for (let d = 0; d < DEVICES; d++) await call('POST', '/v1/device?roleId=1', { properties: { nodeId: data.nodeId(d) } }, token);
for (const batch of data.batches(5000)) {
  const r = await call('POST', '/write?db=history', batch, token);
  if (r.status !== 204) throw new Error(r.text);
}
await sealDue(db, Date.now());
const one = data.nodeId(0);
const start = endOfData - DAYS * DAY;
const queries = {
  last: `SELECT last(soc) FROM power WHERE nodeId = '${one}'`,
  light: `SELECT last(soc) FROM power WHERE nodeId = '${one}' AND time >= ${endOfData - 3_600_000}ms AND time < ${endOfData}ms`,
  spread: `SELECT spread(energy) FROM power WHERE nodeId = '${one}' AND time >= ${start}ms AND time < ${endOfData}ms GROUP BY time(1d)`,
  hourlyMax: `SELECT max(grid) FROM power WHERE nodeId = '${one}' AND time >= ${start}ms AND time < ${endOfData}ms GROUP BY time(1h)`,
};
const picked = process.env.QUERIES?.split(',');
if (process.env.TRACE_SQL && pgDb) {
  const { default: pg } = await import('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, ...rest) {
    if (globalThis.traceSql) console.log('SQL', String(typeof config === 'string' ? config : config.text ?? config.name).replace(/\s+/g, ' ').slice(0, 200));
    return query.call(this, config, ...rest);
  };
}
const session = process.env.PROFILE ? new Session() : undefined;
session?.connect();
await session?.post('Profiler.enable');
await session?.post('Profiler.start');
for (const [name, q] of Object.entries(queries)) {
  if (picked && !picked.includes(name)) continue;
  const times = [];
  let text = '';
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await call('GET', `/query?db=history&q=${encodeURIComponent(q)}`, undefined, token);
    times.push(performance.now() - t0);
    text = r.text;
  }
  const cpu = process.cpuUsage(cpu0);
  if (process.env.TRACE_SQL) { globalThis.traceSql = true; await call('GET', `/query?db=history&q=${encodeURIComponent(q)}`, undefined, token); globalThis.traceSql = false; }
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${times[Math.floor(RUNS / 2)].toFixed(2)} ms, this process's CPU ${((cpu.user + cpu.system) / 1000 / RUNS).toFixed(2)} ms a query (${text.length} bytes) ${text.slice(0, 120)}`);
}
if (session) writeFileSync(process.env.PROFILE, JSON.stringify((await session.post('Profiler.stop')).profile));
await db.close();
await pgDb?.drop();
