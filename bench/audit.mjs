// What the audit log costs a write: PATCH /v1/device with 16 connections, with the audit entry written in the same
// unit of work (what the appliance does) and without it (BENCH_AUDIT=off, a benchmark-only switch of
// bench/hardening-server.ts). Each PATCH changes one property, so each writes one entry with its before and after.
// The two modes alternate over ROUNDS rounds on fresh data dirs and the medians are compared; then both run at once
// (two servers loaded in the same seconds), which the machine's drifting load hits alike. Aim (issue 19): with >= 0.9
// x without.
// Every load is bounded by a request count and a time cap. Run: node bench/audit.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, load } from './lib/load.mjs';
import { call as httpCall, accessToken as adminAccessToken } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = Number(process.env.PATCH_REQUESTS ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ADMIN_PASSWORD = 'bench-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);
const call = (url, method, path, options = {}) => httpCall(url, method, path, { expect: '2xx', ...options });

async function start(audit) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-audit-'));
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir, BENCH_AUDIT: audit };
  const server = await startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'bench/hardening-server.ts')], { env, timeoutMs: 60_000 });
  return { server, dir, stop: async () => { await server.stop(); rmSync(dir, { recursive: true, force: true }); } };
}

async function patchThroughput(audit, started, connections = 16, requests = REQUESTS, seconds = 20) {
  const { server, stop } = started ?? await start(audit);
  try {
    const token = await adminAccessToken(server.url, 'admin@localhost', ADMIN_PASSWORD);
    const ids = [];
    for (let i = 0; i < 8; i++) {
      ids.push(JSON.parse(await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId: `n${i}`, name: `meter ${i}`, n: 0 } } })).device.id);
    }
    let k = 0;
    const cpu0 = cpuMs(server.child.pid);
    const r = await load({
      url: `${server.url}/v1/device/${ids[0]}`, method: 'PATCH', connections, requests, seconds,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: () => JSON.stringify([{ op: 'replace', path: '/n', value: ++k }]),
    });
    r.cpuPerRequest = (cpuMs(server.child.pid) - cpu0) / r.requests;
    const entries = JSON.parse(await call(server.url, 'POST', '/v1/audit/query', { token, body: { filter: { action: 'device.patch' }, limit: 1000 } })).entries.length;
    if ((audit === 'on') !== (entries > 0)) throw new Error(`audit ${audit} but ${entries} device.patch entries`);
    return r;
  } finally {
    await stop();
  }
}

const runs = { on: [], off: [] };
for (let round = 0; round < ROUNDS; round++) {
  // alternate which mode goes first, so neither always runs on a warmer machine
  const order = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
  for (const mode of order) runs[mode].push(await patchThroughput(mode));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rps = {};
for (const [mode, rs] of Object.entries(runs)) {
  rps[mode] = median(rs.map((r) => r.rps));
  console.log(`audit ${mode.padEnd(3)} PATCH, 16 connections, ${ROUNDS} x ${rs[0].requests}: median ${fmt(rps[mode], 0)} req/s `
    + `(${rs.map((r) => fmt(r.rps, 0)).join(', ')}), p50 ${fmt(median(rs.map((r) => r.p50)))} ms, p99 ${fmt(median(rs.map((r) => r.p99)))} ms, `
    + `server CPU ${fmt(median(rs.map((r) => r.cpuPerRequest)), 3)} ms/request, errors ${rs.reduce((n, r) => n + r.errors, 0)}`);
}
// each round's two runs ran back to back: their ratio is the least disturbed by the machine's drifting load
const paired = runs.on.map((r, i) => r.rps / runs.off[i].rps);
const cpu = median(runs.on.map((r) => r.cpuPerRequest)) / median(runs.off.map((r) => r.cpuPerRequest));
// Both at once: two servers loaded in the same seconds (8 connections each), so whatever else the machine does hits
// both alike; the ratio of their throughputs is the audit write's price under identical conditions.
const together = [];
for (let round = 0; round < ROUNDS; round++) {
  const [on, off] = await Promise.all([start('on'), start('off')]);
  // a time cap, not a request cap: neither finishes early and then runs alone on a quieter machine
  const [a, b] = await Promise.all([patchThroughput('on', on, 8, 100_000, 8), patchThroughput('off', off, 8, 100_000, 8)]);
  together.push(a.rps / b.rps);
}
console.log(`both at once, 8 connections each, ${ROUNDS} rounds: with / without ${together.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median(together), 2)})`);
console.log(`with / without the audit write: medians ${fmt(rps.on / rps.off, 2)}; per round ${paired.map((x) => fmt(x, 2)).join(', ')} `
  + `(median ${fmt(median(paired), 2)}); server CPU per request ${fmt(cpu, 2)}x (aim: throughput >= 0.9)`);
