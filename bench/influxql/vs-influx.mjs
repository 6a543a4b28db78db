// InfluxQL benchmark (issue 14): the three queries of bench/telemetry/vs-influx.mjs, sent as InfluxQL through
// GET|POST /query to gridkeeper and to InfluxDB 1.x, on the same machine, in the same run, over loopback, after the
// same points were written to both through POST /write.
//   data:   POINTS points (default 1,000,000: 100 series x 10,000 timestamps 10 s apart, 5 fields), batches of 5,000
//   query:  last 1,000 points of 3 fields of one series; a 1-day mean of one field; a batch of 1,000 statements
//           (latest point of one series within the last hour) in one request — medians of interleaved runs.
// gridkeeper is charged for every query (premium tier; a 429 is waited out as its Retry-After says, untimed); the two
// answers are compared before the clock starts. BACKEND=postgres runs gridkeeper on a fresh database of the
// PostgreSQL server at GRIDKEEPER_TEST_DATABASE_URL (default this machine's) instead of its embedded SQLite.
// Run: node bench/influxql/vs-influx.mjs     (env POINTS, RUNS, INFLUXD, NO_BUILD=1, BACKEND=sqlite|postgres)
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundle, startServer } from '../lib/spawn.mjs';
import { ensureInfluxd, startInflux } from '../telemetry/influx.mjs';
import { energyDataset } from '../lib/energy-dataset.mjs';
import { influxDoorSession, timedRequest } from '../lib/http.mjs';
import { benchDatabase } from '../lib/postgres.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const POINTS = Number(process.env.POINTS ?? 1_000_000);
const SERIES = 100;
const BATCH = 5000;
const STEP_MS = 10_000;
const RUNS = Number(process.env.RUNS ?? 15);
const BACKEND = process.env.BACKEND ?? 'sqlite';
const PASSWORD = 'bench-password-1';
const log = (msg) => console.error(`[bench] ${msg}`);
const fmt = (n, d = 1) => Number(n).toFixed(d);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

const request = (url, options) => timedRequest(agent, url, options);
async function expect(res, status, what) {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

const { nodeId, endMs, batchBody } = energyDataset({ points: POINTS, series: SERIES, batch: BATCH, stepMs: STEP_MS });

async function main() {
  const influxd = ensureInfluxd(log);
  buildBundle(log);
  const gkDir = mkdtempSync(join(tmpdir(), 'gk-qlbench-'));
  const inDir = mkdtempSync(join(tmpdir(), 'influx-qlbench-'));
  let gk;
  let influx;
  const db = BACKEND === 'postgres' ? await benchDatabase('gk_bench_influxql') : undefined;
  try {
    gk = await startServer(process.execPath, [join(root, 'dist', 'gridkeeper.cjs'), '--data-dir', gkDir],
      { env: { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}) } });
    influx = await startInflux(influxd, inDir);
    log(`gridkeeper ${gk.url}, InfluxDB ${influx.version} ${influx.url}`);
    const { auth } = await influxDoorSession(gk.url, PASSWORD, Array.from({ length: SERIES }, (_, s) => nodeId(s)));
    await expect(request(`${influx.url}/query?q=${encodeURIComponent('CREATE DATABASE energy')}`, { method: 'POST' }), 200, 'create database');

    log(`writing ${POINTS} points through /write into both`);
    for (let b = 0; b < POINTS / BATCH; b++) {
      const body = batchBody(b);
      await expect(request(`${gk.url}/write?db=energy`, { method: 'POST', headers: auth, body }), 204, 'gridkeeper write');
      await expect(request(`${influx.url}/write?db=energy`, { method: 'POST', body }), 204, 'influx write');
    }

    const one = nodeId(42);
    const dayFrom = endMs - 86_400_000;
    const hourFrom = endMs - 3_600_000;
    const queries = {
      last1000: `SELECT power, voltage, current FROM energy WHERE nodeId = '${one}' ORDER BY time DESC LIMIT 1000`,
      mean1day: `SELECT mean(power) FROM energy WHERE nodeId = '${one}' AND time >= ${dayFrom}ms AND time < ${endMs}ms`,
      batch1000: Array.from({ length: 1000 }, (_, i) => `SELECT power FROM energy WHERE nodeId = '${nodeId(i % SERIES)}' AND time >= ${hourFrom}ms ORDER BY time DESC LIMIT 1`).join('; '),
    };
    const query = async (url, headers, q) => {
      for (;;) {
        const r = await request(`${url}/query?db=energy`, { method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(q)}` });
        if (r.status !== 429) return expect(r, 200, `query on ${url}`);
        const wait = Number(r.headers['retry-after'] ?? 1);
        log(`429 from ${url}/query: waiting ${wait} s (Retry-After)`);
        await new Promise((resolve) => setTimeout(resolve, 1000 * wait));
      }
    };

    // The two servers must give the same answers (floats within 1e-9 relative) before their speed is compared.
    const same = (a, b) => {
      if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
      if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
      if (a && b && typeof a === 'object' && typeof b === 'object') {
        const ka = Object.keys(a).sort();
        return ka.join() === Object.keys(b).sort().join() && ka.every((k) => same(a[k], b[k]));
      }
      return a === b;
    };
    for (const [name, q] of Object.entries(queries)) {
      const a = (await query(gk.url, auth, q)).text;
      const b = (await query(influx.url, {}, q)).text;
      if (!same(JSON.parse(a), JSON.parse(b))) throw new Error(`${name}: answers differ\n  gridkeeper ${a.slice(0, 300)}\n  influxdb   ${b.slice(0, 300)}`);
    }

    const times = {};
    for (const [name, q] of Object.entries(queries)) {
      times[name] = { gk: [], in: [] };
      for (let r = 0; r < 3; r++) { await query(gk.url, auth, q); await query(influx.url, {}, q); } // warm-up
      for (let r = 0; r < RUNS; r++) {
        times[name].gk.push((await query(gk.url, auth, q)).ms);
        times[name].in.push((await query(influx.url, {}, q)).ms);
      }
    }
    console.log(`InfluxQL benchmark: gridkeeper (${BACKEND === 'postgres' ? 'PostgreSQL' : 'SQLite'}) /query vs InfluxDB ${influx.version} /query (${POINTS} points, ${SERIES} series, 5 fields)`);
    const labels = { last1000: 'last 1000 x 3 fields', mean1day: '1-day mean', batch1000: '1000-statement batch' };
    for (const [name, t] of Object.entries(times)) {
      const g = median(t.gk);
      const i = median(t.in);
      console.log(`  ${labels[name].padEnd(21)} gridkeeper ${fmt(g, 2).padStart(8)} ms   InfluxDB ${fmt(i, 2).padStart(8)} ms   ratio ${fmt(g / i, 2)}   (median of ${RUNS}; aim <= 1.0)`);
    }
  } finally {
    agent.destroy();
    await gk?.stop();
    await influx?.stop();
    await db?.drop();
    rmSync(gkDir, { recursive: true, force: true });
    rmSync(inDir, { recursive: true, force: true });
  }
}

await main();
