// Events out (issue 40), on the built executable (dist/gridkeeper; BACKEND=postgres for PostgreSQL):
// 1. PATCH /v1/device throughput with one webhook subscriber and with none, both servers loaded in the same seconds
//    (8 connections each, ROUNDS rounds), so the machine's drifting load hits both alike. Aim: >= 0.9 x.
// 2. Events per second delivered to a local receiver: EVENTS changes made with no subscriber, then one subscription
//    replays them all; timed from the replay's answer to the last delivery received.
// 3. Commit to delivery: sequential PATCHes at a moderate rate; for each, the time from its 2xx answer (after the
//    commit) to the receiver getting its event; p50 and p99.
// The receiver runs in a child process, so the load generator and it do not share an event loop. Every load is
// bounded by a count and a time cap. The outbox after 1M events is measured by bench/events-outbox.ts.
// Before each round's measured seconds both servers take WARMUP PATCHes (default 3,000; 0: none).
// SUBSCRIBER=mqtt: the first server's subscriber is an MQTT one with no broker configured, so each change writes its
// event's pending delivery and nothing is sent: what the rows in the change's unit of work cost alone.
// Run: npm run build && node bench/events.mjs   (env BACKEND, ROUNDS, WARMUP, EVENTS, LATENCY_SAMPLES, GK_EXE, GK_ENV)
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
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const EVENTS = Number(process.env.EVENTS ?? 10_000);
const LATENCY_SAMPLES = Number(process.env.LATENCY_SAMPLES ?? 400);
const BACKEND = process.env.BACKEND ?? 'sqlite';
const WARMUP = Number(process.env.WARMUP ?? 3_000);
const MQTT = process.env.SUBSCRIBER === 'mqtt';
// GK_EXE: another executable, or a bundle (.cjs) run by this node; GK_ENV: more settings of the servers, as JSON
const EXE = process.env.GK_EXE ?? join(root, 'dist/gridkeeper');
const EXTRA_ENV = JSON.parse(process.env.GK_ENV ?? '{}');
const PASSWORD = 'bench-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const call = (url, method, path, options = {}) => httpCall(url, method, path, { expect: '2xx', ...options });

/** The receiver: a child process that answers 204 and reports each event's id, subject and arrival time. */
function startReceiver() {
  const child = fork(join(root, 'bench/lib/events-receiver.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const listeners = new Set();
  child.on('message', (m) => { for (const l of listeners) l(m); });
  return new Promise((resolve) => {
    child.once('message', (m) => resolve({
      url: m.url, child,
      on: (fn) => { listeners.add(fn); return () => listeners.delete(fn); },
      stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }),
    }));
  });
}

let servers = 0;
async function start() {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-events-'));
  const db = BACKEND === 'postgres' ? await benchDatabase(`gk_bench_events_${process.pid}_${++servers}`) : undefined;
  const env = {
    GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true',
    ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}),
  };
  const [command, ...args] = EXE.endsWith('.cjs') ? [process.execPath, EXE, 'serve'] : [EXE];
  const server = await startServer(command, args, { env: { ...env, ...EXTRA_ENV }, timeoutMs: 60_000 });
  const token = await accessToken(server.url, 'admin@localhost', PASSWORD);
  const id = JSON.parse(await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { name: 'meter', n: 0 } } })).device.id;
  return {
    ...server, token, id,
    subscribe: async (url, kind = 'webhook') => JSON.parse(await call(server.url, 'POST', '/v1/webhook?roleId=1', {
      token, body: kind === 'mqtt' ? { kind, name: 'bench', types: ['device.*'] } : { name: 'bench', url, types: ['device.*'] },
    })).webhook,
    stop: async () => { await server.stop(); rmSync(dir, { recursive: true, force: true }); await db?.drop(); },
  };
}

function patchLoad(s, seconds, connections = 8, requests = 1_000_000) {
  let k = 0;
  return load({
    url: `${s.url}/v1/device/${s.id}`, method: 'PATCH', connections, requests, seconds,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: () => JSON.stringify([{ op: 'replace', path: '/n', value: ++k }]),
  });
}

const rx = await startReceiver();
let received = 0;
rx.on((m) => { if (m.id) received++; });
try {
  // 1. throughput, with and without a subscriber, in the same seconds
  const ratios = [];
  const withRps = [];
  const withoutRps = [];
  const cpuWith = [];
  const cpuWithout = [];
  let delivered = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b] = await Promise.all([start(), start()]);
    try {
      await a.subscribe(rx.url, MQTT ? 'mqtt' : 'webhook');
      // both servers serve WARMUP PATCHes first (the subscriber's delivered), so that the rounds compare running
      // servers rather than ones still compiling their paths
      const warm = received;
      await Promise.all([patchLoad(a, 30, 8, WARMUP), patchLoad(b, 30, 8, WARMUP)]);
      for (let i = 0; i < 600 && !MQTT && received - warm < WARMUP; i++) await new Promise((r) => setTimeout(r, 50));
      const before = received;
      const cpu0 = [cpuMs(a.child.pid), cpuMs(b.child.pid)];
      const [ra, rb] = await Promise.all([patchLoad(a, 8), patchLoad(b, 8)]);
      if (ra.errors + rb.errors > 0) throw new Error(`errors: ${ra.errors} with, ${rb.errors} without`);
      for (let i = 0; i < 600 && !MQTT && received - before < ra.requests; i++) await new Promise((r) => setTimeout(r, 50));
      delivered += received - before;
      // server CPU per PATCH, the delivery of its event included (measured after the last delivery)
      cpuWith.push((cpuMs(a.child.pid) - cpu0[0]) / ra.requests);
      cpuWithout.push((cpuMs(b.child.pid) - cpu0[1]) / rb.requests);
      ratios.push(ra.rps / rb.rps);
      withRps.push(ra.rps);
      withoutRps.push(rb.rps);
    } finally {
      await a.stop();
      await b.stop();
    }
  }
  console.log(`[${BACKEND}] PATCH, 8 connections each, both servers at once, ${ROUNDS} x 8 s after ${WARMUP} each: with one ${MQTT ? 'MQTT subscriber (no broker: nothing sent)' : 'webhook subscriber'} `
    + `${withRps.map((x) => fmt(x, 0)).join(', ')} req/s, without ${withoutRps.map((x) => fmt(x, 0)).join(', ')} req/s; `
    + `with / without ${ratios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median(ratios), 2)}; aim >= 0.9); ${delivered} events delivered meanwhile; `
    + `server CPU per PATCH with ${cpuWith.map((x) => fmt(x, 3)).join(', ')} ms (its delivery included; median ${fmt(median(cpuWith), 3)}), `
    + `without ${cpuWithout.map((x) => fmt(x, 3)).join(', ')} ms (median ${fmt(median(cpuWithout), 3)})`);

  // 2. delivery rate: a backlog of EVENTS events replayed to one subscription
  const s = await start();
  try {
    const from = new Date(Date.now() - 1000).toISOString();
    const made = await patchLoad(s, 120, 16, EVENTS);
    if (made.errors > 0) throw new Error(`${made.errors} errors making the backlog`);
    const w = await s.subscribe(rx.url);
    const before = received;
    const t0 = performance.now();
    const { queued } = JSON.parse(await call(s.url, 'POST', `/v1/webhook/${w.id}/replay`, { token: s.token, body: { from, to: new Date(Date.now() + 1000).toISOString() } }));
    for (let i = 0; i < 6000 && received - before < queued; i++) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - t0) / 1000;
    console.log(`[${BACKEND}] delivery: ${received - before} of ${queued} replayed events reached the local receiver in ${fmt(seconds, 2)} s: ${fmt((received - before) / seconds, 0)} events/s`);

    // 3. commit to delivery, one PATCH at a time at ~50 per second
    const arrivals = new Map();
    const off = rx.on((m) => { if (m.after !== undefined) arrivals.set(m.after, m.at); });
    const acks = new Map();
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const value = `lat-${i}`;
      await call(s.url, 'PATCH', `/v1/device/${s.id}`, { token: s.token, body: [{ op: 'replace', path: '/name', value }] });
      acks.set(value, performance.timeOrigin + performance.now());
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < 500 && arrivals.size < LATENCY_SAMPLES; i++) await new Promise((r) => setTimeout(r, 20));
    off();
    const lat = [...acks].filter(([v]) => arrivals.has(v)).map(([v, at]) => Math.max(arrivals.get(v) - at, 0)).sort((a, b) => a - b);
    console.log(`[${BACKEND}] commit to delivery (2xx answer to receipt), ${lat.length} of ${LATENCY_SAMPLES} changes one at a time: `
      + `p50 ${fmt(percentile(lat, 50))} ms, p99 ${fmt(percentile(lat, 99))} ms, max ${fmt(lat.at(-1))} ms`);
  } finally {
    await s.stop();
  }
} finally {
  await rx.stop();
}
process.exit(0);
