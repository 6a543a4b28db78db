// Profiles the 1-day mean of bench/influxql/vs-influx.mjs alone: the same points written to the built server, then
// the query sent COUNT times over one keep-alive connection with the API token, beside variants that each leave out
// one part of its work, so that the differences of their medians break the query's time down:
//   healthz      GET /healthz (the HTTP exchange)
//   show         SHOW DATABASES with the API token (authentication, charge-free statement, JSON answer)
//   mean-1min    the mean over the last minute (6 points: everything but the read of the day)
//   mean-1day    the benchmark's query (8,640 points)
//   mean-1day-10s     the day less 10 s (8,639 points: an estimate under a read worker's threshold)
//   mean-1day-bearer  the same with an access token (Bearer) instead of the API token
// A 429 (the premium bucket holds ~650 of these queries and leaks 10 a second) is waited out, untimed.
// PROFILE=dir runs the server under `node --cpu-prof` and leaves its profile in dir (for readable names, build with
// minify off in src/build/esbuild-plugins.mjs). DIST=dir picks the build (default dist/).
// Run: node bench/influxql/prof-mean.mjs     (env POINTS, COUNT, ROUNDS, DIST, PROFILE, ONLY=mean-1day)
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib/spawn.mjs';
import { energyDataset } from '../lib/energy-dataset.mjs';
import { influxDoorSession, timedRequest } from '../lib/http.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const POINTS = Number(process.env.POINTS ?? 1_000_000);
const COUNT = Number(process.env.COUNT ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DIST = resolve(process.env.DIST ?? join(root, 'dist'));
const PROFILE = process.env.PROFILE;
const SERIES = 100;
const PASSWORD = 'bench-password-1';
const log = (msg) => console.error(`[prof] ${msg}`);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = (url, options) => timedRequest(agent, url, options);
async function expect(res, status, what) {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

const { nodeId, endMs, batchBody } = energyDataset({ points: POINTS, series: SERIES, batch: 5000, stepMs: 10_000 });
const dir = mkdtempSync(join(tmpdir(), 'gk-profmean-'));
const nodeArgs = PROFILE ? ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${resolve(PROFILE)}`] : [];
const gk = await startServer(process.execPath, [...nodeArgs, join(DIST, 'gridkeeper.cjs'), '--data-dir', dir],
  { env: { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD } });
try {
  const { access, auth } = await influxDoorSession(gk.url, PASSWORD, Array.from({ length: SERIES }, (_, s) => nodeId(s)));
  const bearer = { authorization: `Bearer ${access}` };
  log(`writing ${POINTS} points`);
  for (let b = 0; b < POINTS / 5000; b++) await expect(request(`${gk.url}/write?db=energy`, { method: 'POST', headers: auth, body: batchBody(b) }), 204, 'write');

  const one = nodeId(42);
  const mean = (fromMs) => `SELECT mean(power) FROM energy WHERE nodeId = '${one}' AND time >= ${fromMs}ms AND time < ${endMs}ms`;
  const query = (headers, q) => ({ method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(q)}` });
  const cases = {
    healthz: [`${gk.url}/healthz`, {}],
    show: [`${gk.url}/query?db=energy`, query(auth, 'SHOW DATABASES')],
    'mean-1min': [`${gk.url}/query?db=energy`, query(auth, mean(endMs - 60_000))],
    'mean-1day': [`${gk.url}/query?db=energy`, query(auth, mean(endMs - 86_400_000))],
    'mean-1day-10s': [`${gk.url}/query?db=energy`, query(auth, mean(endMs - 86_390_000))],
    'mean-1day-bearer': [`${gk.url}/query?db=energy`, query(bearer, mean(endMs - 86_400_000))],
  };
  const names = process.env.ONLY ? process.env.ONLY.split(',') : Object.keys(cases);
  for (const name of names) log(`${name}: ${(await expect(request(...cases[name]), 200, name)).text.slice(0, 160)}`);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of names) {
      const ms = [];
      for (let i = 0; i < COUNT; i++) {
        let res = await request(...cases[name]);
        while (res.status === 429) {
          await new Promise((r) => setTimeout(r, 1000 * Number(res.headers['retry-after'] ?? 1)));
          res = await request(...cases[name]);
        }
        if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        ms.push(res.ms);
      }
      times[name].push(median(ms));
    }
  }
  console.log(`1-day mean, parts (${POINTS} points, ${COUNT} requests a round, ${ROUNDS} rounds; medians of each round, ms; load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  for (const name of names) console.log(`  ${name.padEnd(18)} ${times[name].map((x) => x.toFixed(3)).join('  ')}`);
} finally {
  agent.destroy();
  await gk.stop();
  rmSync(dir, { recursive: true, force: true });
}
