// Where the server's CPU goes per PATCH with one webhook subscriber and with none (bench/events.mjs's throughput
// part, one server at a time so the profiles are not disturbed by a second one): each server runs the bundle under
// node --cpu-prof, takes REQUESTS PATCHes over 8 connections, waits for the last delivery and exits; then the two
// profiles' self time is summed per function and per source area and printed per PATCH, largest differences first.
// The CPU per PATCH printed first is the process's (/proc); the profiles sample wall time, so on a busy machine a system
// call that wakes another process (writev to the receiver's socket) also collects the time that process runs.
// Run: node build.mjs --no-sea && node bench/events-profile.mjs   (env REQUESTS=20000, TOP=40, BACKEND=postgres,
// KEEP=<dir>: keep the two profiles there; GK_BUNDLE: another bundle; GK_ENV: more settings, as JSON)
import { fork } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, load } from './lib/load.mjs';
import { call as httpCall, accessToken } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';
import { benchDatabase } from './lib/postgres.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = Number(process.env.REQUESTS ?? 20_000);
const TOP = Number(process.env.TOP ?? 40);
const BACKEND = process.env.BACKEND ?? 'sqlite';
const PASSWORD = 'bench-password-1';
const call = (url, method, path, options = {}) => httpCall(url, method, path, { expect: '2xx', ...options });

function startReceiver() {
  const child = fork(join(root, 'bench/lib/events-receiver.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let received = 0;
  return new Promise((resolve) => {
    child.on('message', (m) => {
      if (m.url) resolve({ url: m.url, count: () => received, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
      else received++;
    });
  });
}

async function profile(subscriber, rx) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-prof-events-'));
  const profDir = join(dir, 'prof');
  const db = BACKEND === 'postgres' ? await benchDatabase(`gk_prof_events_${process.pid}_${subscriber ? 1 : 0}`) : undefined;
  const env = {
    GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: join(dir, 'data'), GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true',
    ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}), ...JSON.parse(process.env.GK_ENV ?? '{}'),
  };
  const server = await startServer(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, process.env.GK_BUNDLE ?? join(root, 'dist/gridkeeper.cjs'), 'serve'], { env, timeoutMs: 60_000 });
  try {
    const token = await accessToken(server.url, 'admin@localhost', PASSWORD);
    const id = JSON.parse(await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { name: 'meter', n: 0 } } })).device.id;
    if (subscriber) await call(server.url, 'POST', '/v1/webhook?roleId=1', { token, body: { name: 'bench', url: rx.url, types: ['device.*'] } });
    const before = rx.count();
    let k = 0;
    const c0 = cpuMs(server.child.pid);
    const r = await load({
      url: `${server.url}/v1/device/${id}`, method: 'PATCH', connections: 8, requests: REQUESTS, seconds: 120,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: () => JSON.stringify([{ op: 'replace', path: '/n', value: ++k }]),
    });
    if (subscriber) for (let i = 0; i < 600 && rx.count() - before < r.requests; i++) await new Promise((res) => setTimeout(res, 50));
    const cpu = (cpuMs(server.child.pid) - c0) / r.requests;
    await server.stop();
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (process.env.KEEP) copyFileSync(join(profDir, file), join(process.env.KEEP, `events-${subscriber ? 'with' : 'without'}.cpuprofile`));
    return { requests: r.requests, rps: r.rps, cpu, delivered: rx.count() - before, ...summarize(JSON.parse(readFileSync(join(profDir, file), 'utf8')), r.requests) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  }
}

/** Self time per function and per area (the module path's folder under src/ or node_modules/), in µs per PATCH. */
function summarize(prof, requests) {
  const self = new Map();
  const dt = new Map();
  for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const fns = new Map();
  const areas = new Map();
  for (const node of prof.nodes) {
    const us = dt.get(node.id) ?? 0;
    if (us === 0) continue;
    const cf = node.callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^.*\//, '')}:${cf.lineNumber}`;
    fns.set(key, (fns.get(key) ?? 0) + us / requests);
    self.set(node.id, us);
  }
  // areas by the bundle's source maps are not available: attribute by the nearest gridkeeper frame on the stack
  const parent = new Map();
  for (const node of prof.nodes) for (const c of node.children ?? []) parent.set(c, node);
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  for (const [id, us] of self) {
    let node = byId.get(id);
    let area = 'other';
    while (node) {
      const name = node.callFrame.functionName;
      if (/^(pump|startSends|send|postSigned|flush|recordOutcomes|claimDue|eventsByIds|subscriptionsWithDue|subscriberRights|envelopeBody|signatureHeader|signWith|postWebhook|run|ping)$/.test(name)) { area = `events:${name}`; break; }
      if (/^(writeEvents|insertEvent|fanOut|withEvents|write)$/.test(name) && node.callFrame.url.includes('gridkeeper')) { area = `unit:${name}`; break; }
      node = parent.get(node.id);
    }
    areas.set(area, (areas.get(area) ?? 0) + us / requests);
  }
  return { fns, areas };
}

const rx = await startReceiver();
try {
  const without = await profile(false, rx);
  const withSub = await profile(true, rx);
  console.log(`[${BACKEND}] ${REQUESTS} PATCHes, 8 connections, one server at a time: with one webhook subscriber ${withSub.rps.toFixed(0)} req/s, `
    + `server CPU ${withSub.cpu.toFixed(3)} ms per PATCH (${withSub.delivered} delivered); without ${without.rps.toFixed(0)} req/s, ${without.cpu.toFixed(3)} ms per PATCH`);
  const show = (title, a, b) => {
    const keys = [...new Set([...a.keys(), ...b.keys()])].map((k) => [k, (a.get(k) ?? 0) - (b.get(k) ?? 0), a.get(k) ?? 0, b.get(k) ?? 0]);
    keys.sort((x, y) => y[1] - x[1]);
    console.log(`\n${title}: µs per PATCH, with - without (with, without)`);
    for (const [k, d, x, y] of keys.slice(0, TOP)) console.log(`${d.toFixed(1).padStart(8)}  (${x.toFixed(1)}, ${y.toFixed(1)})  ${k}`);
  };
  show('by stack area (nearest known frame)', withSub.areas, without.areas);
  show('by function (self time)', withSub.fns, without.fns);
} finally {
  await rx.stop();
}
process.exit(0);
