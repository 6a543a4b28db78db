// Memory of raw-week reads (issue 38): a server started on a month kept by `KEEP=1 node bench/telemetry/history.mjs`
// (its data directory, with the benchmark's admin and readers), the history queries run RUNS times each, then two
// clients reading a raw week of one device in a loop (at least MINRAW weeks) beside LIGHT light queries. Prints one
// JSON line: the server's RSS at start, its peak after the queries and with the raw weeks, the query medians, the
// light query's p50/p99 and the load average.
// Run: node bench/telemetry/history-raw.mjs <gridkeeper.cjs> <data dir>   (env DAYS of the data, RUNS, LIGHT, MINRAW,
//      FLAGS: node flags for the server, OUT: the server's stdout, e.g. with FLAGS=--trace-gc)
import { spawn } from 'node:child_process';
import { readFileSync, createWriteStream } from 'node:fs';
import http from 'node:http';
const [bundle, dir] = process.argv.slice(2);
const FLAGS = (process.env.FLAGS ?? '').split(' ').filter(Boolean);
const LIGHT = Number(process.env.LIGHT ?? 300);
const DAY = 86400000;
const child = spawn(process.execPath, [...FLAGS, bundle, '--data-dir', dir], { env: { PATH: process.env.PATH, GRIDKEEPER_PORT: '0', GRIDKEEPER_LOG: 'error', GRIDKEEPER_ADMIN_PASSWORD: 'bench-password-1', ...JSON.parse(process.env.ENV_JSON ?? '{}') }, stdio: ['ignore', 'pipe', 'inherit'] });
const out = createWriteStream(process.env.OUT ?? '/dev/null');
let url; let buf = '';
await new Promise((res) => child.stdout.on('data', (d) => { out.write(d); if (!url) { buf += d; const m = /"url":"(http:\/\/[^"]+)"/.exec(buf); if (m) { url = m[1]; res(); } } }));
const pid = child.pid; process.on('exit', () => child.kill('SIGKILL'));
const status = () => readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status())[1]) / 1024;
let curMax = 0; const t = setInterval(() => { curMax = Math.max(curMax, kb('VmRSS')); }, 20);
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function req(path, { method = 'GET', headers = {}, body } = {}) {
  const t0 = performance.now();
  return new Promise((res, rej) => {
    const r = http.request(url + path, { method, headers, agent }, (resp) => { const chunks = []; resp.on('data', (c) => chunks.push(c)); resp.on('end', () => res({ status: resp.statusCode, retryAfter: Number(resp.headers['retry-after'] ?? 1), text: Buffer.concat(chunks).toString(), ms: performance.now() - t0 })); });
    r.on('error', rej); if (body) r.write(body); r.end();
  });
}
const login = async (u) => { const refresh = (await req('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: u, password: 'bench-password-1' }) })).text; return 'Bearer ' + (await req('/auth/accesstoken', { headers: { authorization: `Bearer ${refresh}` } })).text; };
let admin = await login('admin@localhost');
const readers = []; for (let r = 0; r < 8; r++) readers.push(await login(`reader${r}@bench`));
const q = async (s, auth = admin) => { let r; for (;;) { r = await req('/query?db=history&epoch=ms', { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(s)}` }); if (r.status === 401 && auth === admin) { admin = auth = await login('admin@localhost'); continue; } if (r.status !== 429) break; await new Promise((res) => setTimeout(res, r.retryAfter * 1000 + 100)); } if (r.status !== 200) throw new Error(r.status + r.text.slice(0, 200)); return r; };
// find the data's end: last time of the data
const lastAns = JSON.parse((await q(`SELECT last(soc) FROM power WHERE nodeId = 'node-007'`)).text);
let endRow = lastAns.results[0].series?.[0].values[0][0];
if (endRow === undefined) { const l = JSON.parse((await q(`SHOW TAG VALUES FROM power WITH KEY = nodeId`)).text); console.error(JSON.stringify(l).slice(0, 300)); process.exit(1); }
const end = Math.floor(endRow / DAY) * DAY + DAY;
const nodes = JSON.parse((await q(`SHOW TAG VALUES FROM power WITH KEY = nodeId`)).text).results[0].series[0].values.map((v) => v[1]);
const one = nodes[7];
const startRss = kb('VmRSS');
const queries = {
  day1m: `SELECT mean(grid), mean(solar), mean(battery) FROM power WHERE nodeId = '${one}' AND time >= ${end - DAY}ms AND time < ${end}ms GROUP BY time(1m)`,
  week10m: `SELECT mean(grid), mean(solar), mean(battery) FROM power WHERE nodeId = '${one}' AND time >= ${end - 7 * DAY}ms AND time < ${end}ms GROUP BY time(10m)`,
  monthSpread: `SELECT spread(energy) FROM power WHERE nodeId = '${one}' AND time >= ${end - Number(process.env.DAYS ?? 8) * DAY}ms AND time < ${end}ms GROUP BY time(1d)`,
  monthMax: `SELECT max(grid) FROM power WHERE nodeId = '${one}' AND time >= ${end - Number(process.env.DAYS ?? 8) * DAY}ms AND time < ${end}ms GROUP BY time(1h)`,
  fleet: `SELECT mean(grid) FROM power WHERE time >= ${end - DAY}ms AND time < ${end}ms GROUP BY time(1h), nodeId`,
  last: `SELECT last(soc) FROM power WHERE nodeId = '${one}'`,
};
const times = {};
for (const [name, s] of Object.entries(queries)) { for (let i = 0; i < 5; i++) await q(s); const ms = []; for (let i = 0; i < Number(process.env.RUNS ?? 15); i++) ms.push((await q(s)).ms); ms.sort((a, b) => a - b); times[name] = ms[ms.length >> 1].toFixed(2); }
const afterQueries = curMax;
const light = `SELECT last(soc) FROM power WHERE nodeId = '${nodes[3]}' AND time >= ${end - 3600000}ms AND time < ${end}ms`;
const raw = `SELECT * FROM power WHERE nodeId = '${nodes[11]}' AND time >= ${end - 7 * DAY}ms AND time < ${end}ms`;
let stop = false; let reads = 0; const rawMs = [];
const rd = Array.from({ length: 2 }, (_, k) => (async () => { for (let i = k; !stop; i += 2) { rawMs.push((await q(raw, readers[i % 8])).ms); reads++; } })()
  .catch((err) => { console.error(`a raw-week reader failed: ${err.message}`); process.exit(1); }));
await new Promise((r) => setTimeout(r, 500));
const lms = []; for (let i = 0; i < LIGHT; i++) lms.push((await q(light)).ms);
while (reads < Number(process.env.MINRAW ?? 16)) await new Promise((r) => setTimeout(r, 50));
stop = true; await Promise.all(rd);
lms.sort((a, b) => a - b); rawMs.sort((a, b) => a - b);
const p = (xs, pc) => xs[Math.min(xs.length - 1, Math.floor(xs.length * pc / 100))].toFixed(2);
clearInterval(t);
const final = kb('VmRSS');
console.log(JSON.stringify({ flags: FLAGS.join(' '), start: startRss.toFixed(0), afterQueries: afterQueries.toFixed(0), peakRaw: curMax.toFixed(0), hwm: kb('VmHWM').toFixed(0), final: final.toFixed(0), threads: kb('Threads') * 1024, times, light: `${p(lms, 50)}/${p(lms, 99)}`, reads, rawP50: p(rawMs, 50), load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') }));
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); process.exit(0);
