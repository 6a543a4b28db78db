// Issue 3 figures (authentication):
//  - server CPU per access-token check (signature + claims or cache hit, plus the revocation lookup): aim < 50 µs;
//  - requests/s of an authenticated no-op route (GET /auth/accesstoken/validate) as a ratio of /healthz in the same
//    run, same generator, interleaved rounds: aim >= 0.8; plus server CPU per request of each, from /proc;
//  - login latency for a wrong password, known vs unknown user (timing parity).
// The HTTP server is a separate process (dist/gridkeeper when GK_EXE is set, else the sources through the test loader).
// Every load is bounded by a request count and a time cap.   Run: node bench/auth.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { cpuMs, load } from './lib/load.mjs';

/** utime + stime of a process in µs. */
const cpuUs = (pid) => cpuMs(pid) * 1000;
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = Number(process.env.REQUESTS ?? 30000);
const ADMIN_PASSWORD = 'bench-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);

function inProcess() {
  const r = spawnSync(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'bench/auth-cpu.ts')],
    { cwd: root, encoding: 'utf8', env: { ...process.env, GRIDKEEPER_LOG: 'error' }, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`auth-cpu failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function http() {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-auth-'));
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir };
  const server = process.env.GK_EXE
    ? await startServer(process.env.GK_EXE, ['serve'], { env })
    : await startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'src/main.ts'), 'serve'], { env });
  try {
    const login = await fetch(`${server.url}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin@localhost', password: ADMIN_PASSWORD }),
    });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
    const refresh = await login.text();
    const access = await (await fetch(`${server.url}/auth/accesstoken`, { headers: { authorization: `Bearer ${refresh}` } })).text();
    const targets = {
      healthz: { url: `${server.url}/healthz` },
      auth: { url: `${server.url}/auth/accesstoken/validate`, headers: { authorization: `Bearer ${access}` } },
    };
    const opts = { connections: 16, requests: REQUESTS, seconds: 15 };
    for (const t of Object.values(targets)) await load({ ...t, ...opts, requests: 3000 }); // warm-up
    const results = { healthz: [], auth: [] };
    // interleave rounds so background load does not favour one side
    for (let round = 0; round < 2; round++) {
      for (const [name, t] of Object.entries(targets)) {
        const c0 = cpuUs(server.child.pid);
        const r = await load({ ...t, ...opts });
        if (r.errors) throw new Error(`${name}: ${r.errors} errors ${JSON.stringify(r.statuses)}`);
        results[name].push({ rps: r.rps, cpuUsPerReq: (cpuUs(server.child.pid) - c0) / r.requests, p50: r.p50 });
      }
    }
    const avg = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
    return {
      healthzRps: avg(results.healthz, 'rps'), authRps: avg(results.auth, 'rps'),
      healthzCpu: avg(results.healthz, 'cpuUsPerReq'), authCpu: avg(results.auth, 'cpuUsPerReq'),
      healthzP50: avg(results.healthz, 'p50'), authP50: avg(results.auth, 'p50'),
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const cpu = inProcess();
const h = await http();
console.log('authentication benchmark' + (process.env.GK_EXE ? ` (${process.env.GK_EXE})` : ' (sources)'));
console.log(`  token check, CPU per request: ${fmt(cpu.warmUs)} µs cached (aim < 50), ${fmt(cpu.coldUs)} µs first sight of a token (full Ed25519 verify); revocation lookup alone ${fmt(cpu.guardUs, 2)} µs`);
console.log(`  /healthz:                     ${fmt(h.healthzRps, 0)} req/s, server CPU ${fmt(h.healthzCpu)} µs/req, p50 ${fmt(h.healthzP50, 2)} ms`);
console.log(`  GET /auth/accesstoken/validate: ${fmt(h.authRps, 0)} req/s, server CPU ${fmt(h.authCpu)} µs/req, p50 ${fmt(h.authP50, 2)} ms`);
console.log(`  ratio authenticated / healthz: ${fmt(h.authRps / h.healthzRps, 2)} (aim >= 0.8); server CPU added by authentication ${fmt(h.authCpu - h.healthzCpu)} µs/req`);
console.log(`  login with a wrong password, median: known user ${fmt(cpu.loginKnownWrongMs)} ms, unknown user ${fmt(cpu.loginUnknownMs)} ms (ratio ${fmt(cpu.loginUnknownMs / cpu.loginKnownWrongMs, 2)})`);
