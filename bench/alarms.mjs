// Alarms (issue 41), on the built executable (dist/gridkeeper; BACKEND=postgres for PostgreSQL):
// 1. Telemetry ingest with 0 rules against ingest with 1,000 and with 10,000 rules, the two servers loaded in the same
//    seconds (ROUNDS rounds), so the machine's drifting load hits both alike: points/s and server CPU per point (the
//    evaluation off the request path included: measured once a breaching point written after the load has raised its
//    alarm, i.e. once the evaluation has caught up). Every rule watches one of DEVICES devices and is never breached,
//    so every point is judged by its rules. Aim: >= 0.9 x.
// 2. Threshold to alarm and to webhook: on the 10,000-rule server, one breaching point at a time; from its write's
//    2xx answer to the alarm's raisedTime, and to the alarm.raised event reaching a local receiver. p50 / p99.
// 3. No-data detection: devices that stop sending, each with a no-data rule of NODATA_SECONDS; the alarm's raisedTime
//    against the last point's arrival plus the duration.
// Every load is bounded by a count and a time cap. Run: node build.mjs && node bench/alarms.mjs
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, load, percentile } from './lib/load.mjs';
import { call as httpCall, accessToken } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';
import { benchDatabase } from './lib/postgres.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 8);
const DEVICES = Number(process.env.DEVICES ?? 1000);
const RULES = (process.env.RULES ?? '1000,10000').split(',').map(Number);
const LATENCY_SAMPLES = Number(process.env.LATENCY_SAMPLES ?? 200);
const NODATA_DEVICES = Number(process.env.NODATA_DEVICES ?? 20);
const NODATA_SECONDS = Number(process.env.NODATA_SECONDS ?? 3);
const BACKEND = process.env.BACKEND ?? 'sqlite';
// PROFILE=dir: the servers run as `node --cpu-prof` of the bundle, writing their profiles into dir
const PROFILE = process.env.PROFILE;
const PASSWORD = 'bench-password-1';
const NS = { version: '1', database: 'energy', retentionPolicy: 'autogen' };
const fmt = (n, d = 1) => Number(n).toFixed(d);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const call = (url, method, path, options = {}) => httpCall(url, method, path, { expect: '2xx', ...options });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function parallel(n, count, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (next < count) await fn(next++); }));
}

function startReceiver() {
  const child = fork(join(root, 'bench/lib/events-receiver.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const listeners = new Set();
  child.on('message', (m) => { for (const l of listeners) l(m); });
  return new Promise((resolve) => {
    child.once('message', (m) => resolve({
      url: m.url, on: (fn) => { listeners.add(fn); return () => listeners.delete(fn); },
      stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }),
    }));
  });
}

let servers = 0;
/** A server with DEVICES devices (one point each) and `rules` threshold rules spread over them, never breached. */
async function start(rules) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-alarms-'));
  const db = BACKEND === 'postgres' ? await benchDatabase(`gk_bench_alarms_${process.pid}_${++servers}`) : undefined;
  const env = { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true', ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}) };
  const [command, args] = PROFILE === undefined ? [join(root, 'dist/gridkeeper'), []]
    : [process.execPath, ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`, join(root, 'dist/gridkeeper.cjs')]];
  const server = await startServer(command, args, { env: { ...env, GRIDKEEPER_LOG: 'warn' }, timeoutMs: 60_000 });
  // the server's warnings and errors (an evaluation that fell behind says so)
  server.child.stdout.on('data', (d) => { for (const line of String(d).split('\n')) if (/"level":"(warn|error)"/.test(line)) console.error(`[server ${rules} rules] ${line.slice(0, 400)}`); });
  const token = await accessToken(server.url, 'admin@localhost', PASSWORD);
  const ids = new Array(DEVICES);
  await parallel(8, DEVICES, async (i) => {
    ids[i] = JSON.parse(await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { name: `meter ${i}`, nodeId: `d${i}`, nodeType: 'powerMeter' } } })).device.id;
  });
  let t = Date.now() - 3_600_000;
  const write = (lines) => call(server.url, 'POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', { token, raw: lines, type: 'text/plain' });
  await write(Array.from({ length: DEVICES }, (_, i) => `power,nodeId=d${i} p=1 ${t}`).join('\n'));
  const t0 = performance.now();
  await parallel(8, rules, async (i) => {
    await call(server.url, 'POST', '/v1/alarm/rule?roleId=1', { token, body: { name: `r${i}`, deviceIds: [ids[i % DEVICES]], series: { namespace: NS, measurement: 'power', field: 'p' }, condition: { type: 'above', value: 1e12 }, severity: 'minor' } });
  });
  const setupSeconds = (performance.now() - t0) / 1000;
  return {
    ...server, token, ids, rules, setupSeconds, write,
    /** one body of DEVICES points, one per device, each request later than the last */
    body: () => { t += 1; return Array.from({ length: DEVICES }, (_, i) => `power,nodeId=d${i} p=${(i % 97) + 0.5} ${t}`).join('\n'); },
    stop: async () => { await server.stop(); rmSync(dir, { recursive: true, force: true }); await db?.drop(); },
  };
}

function ingest(s, seconds) {
  return load({ url: `${s.url}/v1/telemetry?db=energy&rp=autogen&precision=ms`, method: 'POST', connections: 4, requests: 1_000_000, seconds,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'text/plain' }, body: s.body });
}

/** Waits until a breaching point written now has raised its alarm: the evaluation has caught up. Returns the wait in ms. */
async function caughtUp(s, deviceIndex) {
  const t0 = performance.now();
  // a server with rules has one on this device (1e12); creating a rule would rebuild its index, whose cost is no
  // cost per point
  if (s.rules <= deviceIndex) {
    await call(s.url, 'POST', '/v1/alarm/rule?roleId=1', { token: s.token, body: { name: 'probe', deviceIds: [s.ids[deviceIndex]], series: { namespace: NS, measurement: 'power', field: 'p' }, condition: { type: 'above', value: 1e15 }, severity: 'minor' } });
  }
  await s.write(`power,nodeId=d${deviceIndex} p=2e15 ${Date.now() + 60_000}`);
  for (let i = 0; i < 6000; i++) {
    const { alarms } = JSON.parse(await call(s.url, 'POST', '/v1/alarm/query', { token: s.token, body: { limit: 1 } }));
    if (alarms.length > 0) return performance.now() - t0;
    await sleep(20);
  }
  throw new Error('the evaluation did not catch up within two minutes');
}

// 1. ingest with and without rules
for (const rules of RULES) {
  const ratios = [];
  const rps = [[], []];
  const cpu = [[], []];
  const waits = [];
  let setup = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const [none, some] = await Promise.all([start(0), start(rules)]);
    setup = some.setupSeconds;
    try {
      const cpu0 = [cpuMs(none.child.pid), cpuMs(some.child.pid)];
      const [a, b] = await Promise.all([ingest(none, SECONDS), ingest(some, SECONDS)]);
      if (a.errors + b.errors > 0) throw new Error(`errors: ${a.errors} without rules, ${b.errors} with`);
      const [w0, w1] = await Promise.all([caughtUp(none, 1), caughtUp(some, 1)]);
      waits.push(w1);
      const points = [a.requests * DEVICES, b.requests * DEVICES];
      cpu[0].push((cpuMs(none.child.pid) - cpu0[0]) / points[0] * 1000);
      cpu[1].push((cpuMs(some.child.pid) - cpu0[1]) / points[1] * 1000);
      rps[0].push(a.rps * DEVICES);
      rps[1].push(b.rps * DEVICES);
      ratios.push(b.rps / a.rps);
      void w0;
    } finally {
      await none.stop();
      await some.stop();
    }
  }
  console.log(`[${BACKEND}] ingest, ${DEVICES}-line bodies, 4 connections each, both servers at once, ${ROUNDS} x ${SECONDS} s: `
    + `0 rules ${rps[0].map((x) => fmt(x, 0)).join(', ')} points/s, ${rules} rules ${rps[1].map((x) => fmt(x, 0)).join(', ')} points/s; `
    + `ratio ${ratios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median(ratios), 2)}; aim >= 0.9); server CPU per point `
    + `${fmt(median(cpu[0]), 2)} µs vs ${fmt(median(cpu[1]), 2)} µs (evaluation included); evaluation caught up ${waits.map((x) => fmt(x, 0)).join(', ')} ms after the load; `
    + `${rules} rules created in ${fmt(setup, 1)} s`);
}

// 2. threshold to alarm, to webhook; 3. no-data delay (INGEST_ONLY=1: not measured)
if (process.env.INGEST_ONLY === '1') process.exit(0);
const rx = await startReceiver();
const s = await start(Math.max(...RULES));
try {
  const arrivals = new Map();
  const off = rx.on((m) => { if (m.alarm !== undefined) arrivals.set(m.alarm, m.at); });
  await call(s.url, 'POST', '/v1/webhook?roleId=1', { token: s.token, body: { name: 'bench', url: rx.url, types: ['alarm.raised'] } });
  const n = Math.min(LATENCY_SAMPLES, DEVICES - NODATA_DEVICES - 2);
  const acks = new Map();
  for (let i = 0; i < n; i++) {
    const d = i + 2;
    await call(s.url, 'POST', '/v1/alarm/rule?roleId=1', { token: s.token, body: { name: `lat${i}`, deviceIds: [s.ids[d]], series: { namespace: NS, measurement: 'power', field: 'p' }, condition: { type: 'above', value: 100 }, severity: 'major' } });
  }
  await sleep(2500); // the rule index is rebuilt once, before the first sample
  for (let i = 0; i < n; i++) {
    const d = i + 2;
    await s.write(`power,nodeId=d${d} p=500 ${Date.now()}`);
    acks.set(s.ids[d], performance.timeOrigin + performance.now());
    await sleep(20);
  }
  for (let i = 0; i < 500 && arrivals.size < n; i++) await sleep(20);
  off();
  const { alarms } = JSON.parse(await call(s.url, 'POST', '/v1/alarm/query', { token: s.token, body: { filter: { severity: ['major'] }, limit: 1000 } }));
  const toAlarm = alarms.filter((a) => acks.has(a.deviceId)).map((a) => Math.max(Date.parse(a.raisedTime) - acks.get(a.deviceId), 0)).sort((x, y) => x - y);
  const toHook = alarms.filter((a) => acks.has(a.deviceId) && arrivals.has(a.id)).map((a) => Math.max(arrivals.get(a.id) - acks.get(a.deviceId), 0)).sort((x, y) => x - y);
  console.log(`[${BACKEND}] threshold to alarm (write's 2xx to raisedTime; ${s.rules} rules), ${toAlarm.length} of ${n}: p50 ${fmt(percentile(toAlarm, 50))} ms, p99 ${fmt(percentile(toAlarm, 99))} ms; `
    + `to webhook delivery ${toHook.length}: p50 ${fmt(percentile(toHook, 50))} ms, p99 ${fmt(percentile(toHook, 99))} ms`);

  const first = DEVICES - NODATA_DEVICES;
  const last = new Map();
  for (let i = 0; i < NODATA_DEVICES; i++) {
    const d = first + i;
    await call(s.url, 'POST', '/v1/alarm/rule?roleId=1', { token: s.token, body: { name: `quiet${i}`, deviceIds: [s.ids[d]], series: { namespace: NS, measurement: 'power', field: 'p' }, condition: { type: 'noData', seconds: NODATA_SECONDS }, severity: 'critical' } });
  }
  await sleep(2500);
  for (let i = 0; i < NODATA_DEVICES; i++) {
    const d = first + i;
    const at = Date.now();
    await s.write(`power,nodeId=d${d} p=1 ${at}`);
    last.set(s.ids[d], at);
    await sleep(Math.round(1000 / NODATA_DEVICES) + 3);
  }
  await sleep(NODATA_SECONDS * 1000 + 3000);
  const quiet = JSON.parse(await call(s.url, 'POST', '/v1/alarm/query', { token: s.token, body: { filter: { severity: ['critical'] }, limit: 1000 } })).alarms;
  // (a quiet device whose setup point was an hour old may have been raised before its fresh point: not counted)
  const delays = quiet.filter((a) => last.has(a.deviceId) && Date.parse(a.startTime) >= last.get(a.deviceId)).map((a) => Date.parse(a.raisedTime) - (last.get(a.deviceId) + NODATA_SECONDS * 1000)).sort((x, y) => x - y);
  console.log(`[${BACKEND}] no-data detection (${NODATA_SECONDS} s rules, checked every second), ${delays.length} of ${NODATA_DEVICES}: `
    + `raised after the duration by p50 ${fmt(percentile(delays, 50), 0)} ms, max ${fmt(delays.at(-1), 0)} ms`);
} finally {
  await s.stop();
  await rx.stop();
}
process.exit(0);
