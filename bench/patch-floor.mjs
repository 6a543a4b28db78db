// Issue 18's PATCH aim (PATCH >= 0.4 x /healthz, 16 connections, every acknowledged write fsynced) against the floor
// of the stack on this machine. Loads, in interleaved rounds, with the same generator (lib/load.mjs):
//   floor /healthz, floor PATCH without a database, floor durable PATCH  (bench/patch-floor-server.mjs: bare Hono and
//   one better-sqlite3 connection, nothing of gridkeeper's), then gridkeeper's /healthz and PATCH of one property
//   (dist/gridkeeper, or GK_EXE; SQLite, the admin's device).
// Prints requests/s, server CPU per request and each ratio to its own server's /healthz. When the floor's durable PATCH
// is below 0.4 x, no code on this stack reaches the aim on this machine, whatever it leaves out.
// Run: node build.mjs && node bench/patch-floor.mjs    (env ROUNDS=3, REQUESTS=6000, GK_EXE: an executable or a .cjs bundle)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, load } from './lib/load.mjs';
import { accessToken, call } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const REQUESTS = Number(process.env.REQUESTS ?? 6000);
const PASSWORD = 'bench-password-1';
const fmt = (n, d = 0) => Number(n).toFixed(d);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-floor-'));
  const floor = await startServer(process.execPath, [join(root, 'bench/patch-floor-server.mjs'), dir]);
  // GK_EXE: another executable, or a bundle (.cjs) run by this node
  const exe = process.env.GK_EXE ?? join(root, 'dist/gridkeeper');
  const [command, ...args] = exe.endsWith('.cjs') ? [process.execPath, exe] : [exe];
  const gk = await startServer(command, [...args, 'serve'],
    { env: { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATA_DIR: join(dir, 'gk') }, timeoutMs: 60_000 });
  try {
    const token = await accessToken(gk.url, 'admin@localhost', PASSWORD);
    const device = JSON.parse(await call(gk.url, 'POST', '/v1/device?roleId=1', { token,
      body: { properties: { name: 'device 1', nodeId: 'node-1', nodeType: 'battery', isActive: true, capacityKwh: 13.5 } } })).device.id;
    let n = 0;
    const patchBody = () => JSON.stringify([{ op: 'replace', path: '/name', value: `renamed ${++n}` }]);
    const json = { 'content-type': 'application/json' };
    const targets = {
      floorHealthz: { server: floor, url: `${floor.url}/healthz`, requests: REQUESTS * 4 },
      floorEcho: { server: floor, url: `${floor.url}/echo/1`, method: 'PATCH', headers: json, body: patchBody },
      floorPatch: { server: floor, url: `${floor.url}/device/1`, method: 'PATCH', headers: json, body: patchBody },
      gkHealthz: { server: gk, url: `${gk.url}/healthz`, requests: REQUESTS * 4 },
      gkPatch: { server: gk, url: `${gk.url}/v1/device/${device}`, method: 'PATCH', headers: { ...json, authorization: `Bearer ${token}` }, body: patchBody },
    };
    const sums = Object.fromEntries(Object.keys(targets).map((k) => [k, { rps: [], cpu: 0, requests: 0, errors: 0 }]));
    for (const t of Object.values(targets)) await load({ connections: 16, seconds: 5, ...t, requests: 1000 }); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, t] of Object.entries(targets)) {
        const pid = t.server.child.pid;
        const c0 = cpuMs(pid);
        const res = await load({ connections: 16, requests: REQUESTS, seconds: 15, ...t });
        const s = sums[name];
        s.cpu += cpuMs(pid) - c0;
        s.requests += res.requests;
        s.errors += res.errors;
        s.statuses = res.statuses;
        s.rps.push(res.rps);
      }
    }
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rps = (k) => median(sums[k].rps);
    console.log(`PATCH against /healthz, 16 connections, ${ROUNDS} interleaved rounds (medians), server CPU per request:`);
    const line = (label, k, base) => console.log(`  ${label.padEnd(44)} ${fmt(rps(k)).padStart(6)} req/s  ${fmt(sums[k].cpu / sums[k].requests, 3)} ms CPU`
      + `${base ? `   ${fmt(rps(k) / rps(base), 3)} x its /healthz` : ''}${sums[k].errors ? `   errors ${sums[k].errors}` : ''}`);
    line('floor: bare Hono /healthz', 'floorHealthz');
    line('floor: PATCH, body read and JSON answer only', 'floorEcho', 'floorHealthz');
    line('floor: durable PATCH (one row, group commit)', 'floorPatch', 'floorHealthz');
    line('gridkeeper /healthz', 'gkHealthz');
    line('gridkeeper PATCH of one property', 'gkPatch', 'gkHealthz');
    console.log(`gridkeeper /healthz vs bare Hono: ${fmt(rps('gkHealthz') / rps('floorHealthz'), 3)}; gridkeeper PATCH vs the floor's durable PATCH: `
      + `${fmt(rps('gkPatch') / rps('floorPatch'), 3)}; aim: PATCH >= 0.4 x /healthz`);
    if (process.env.DEBUG) console.log(JSON.stringify(sums));
    console.log(JSON.stringify(Object.fromEntries(Object.entries(sums).map(([k, s]) => [k, { rps: rps(k), cpuMs: s.cpu / s.requests }]))));
  } finally {
    await gk.stop();
    await floor.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
