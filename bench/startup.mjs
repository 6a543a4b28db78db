// Issue 2 figures: cold start of dist/gridkeeper to the first 200 from /healthz (median of 20), /healthz throughput
// through the full middleware stack as a ratio of a bare @hono/node-server hello world (same run, same generator),
// executable size, idle RSS.   Run: node build.mjs && node bench/startup.mjs
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, percentile, rssOf } from './lib/load.mjs';
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const exe = process.env.GK_EXE ?? join(root, "dist", "gridkeeper");
const RUNS = Number(process.env.RUNS ?? 20);
const fmt = (n, d = 1) => Number(n).toFixed(d);

async function coldStart() {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'gk-bench-'));
    // warm data dir (migrated, keys, addon extracted) is the normal restart; the very first start also hashes the
    // admin password and extracts the addon, so it is reported separately below.
    const t0 = performance.now();
    const s = await startServer(exe, ['--data-dir', dir], { env: { GRIDKEEPER_ADMIN_PASSWORD: 'bench-password-1' } });
    let status = 0;
    while (status !== 200) status = (await fetch(`${s.url}/healthz`)).status;
    const first = performance.now() - t0;
    await s.stop();
    const t1 = performance.now();
    const again = await startServer(exe, ['--data-dir', dir]);
    status = 0;
    while (status !== 200) status = (await fetch(`${again.url}/healthz`)).status;
    times.push({ first, restart: performance.now() - t1 });
    await again.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const firsts = times.map((t) => t.first).sort((a, b) => a - b);
  const restarts = times.map((t) => t.restart).sort((a, b) => a - b);
  return { firstMedian: percentile(firsts, 50), restartMedian: percentile(restarts, 50), restartP90: percentile(restarts, 90) };
}

async function throughput() {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-'));
  const gk = await startServer(exe, ['--data-dir', dir], { env: { GRIDKEEPER_ADMIN_PASSWORD: 'bench-password-1' } });
  const bare = await startServer(process.execPath, [join(root, 'bench', 'bare-hono.mjs')]);
  await new Promise((r) => setTimeout(r, 300));
  const idle = rssOf(gk.child.pid);
  const opts = { connections: 16, requests: 40000, seconds: 8 };
  await load({ url: `${gk.url}/healthz`, ...opts, requests: 3000 }); // warm-up
  await load({ url: `${bare.url}/healthz`, ...opts, requests: 3000 });
  // interleave two rounds so a burst of background load does not favour one side
  const a1 = await load({ url: `${gk.url}/healthz`, ...opts });
  const b1 = await load({ url: `${bare.url}/healthz`, ...opts });
  const a2 = await load({ url: `${gk.url}/healthz`, ...opts });
  const b2 = await load({ url: `${bare.url}/healthz`, ...opts });
  const peak = rssOf(gk.child.pid);
  await gk.stop();
  await bare.stop();
  rmSync(dir, { recursive: true, force: true });
  const gkRps = (a1.rps + a2.rps) / 2;
  const bareRps = (b1.rps + b2.rps) / 2;
  return { gkRps, bareRps, ratio: gkRps / bareRps, p99: Math.max(a1.p99, a2.p99), errors: a1.errors + a2.errors, idle, peak };
}

const size = statSync(exe).size;
const cs = await coldStart();
const tp = await throughput();
console.log(`gridkeeper startup benchmark (${RUNS} runs)`);
console.log(`  executable size                 ${fmt(size / 1024 / 1024)} MB`);
console.log(`  cold start, fresh data dir      median ${fmt(cs.firstMedian)} ms   (creates schema, keys, admin; extracts the addon)`);
console.log(`  cold start, existing data dir   median ${fmt(cs.restartMedian)} ms, p90 ${fmt(cs.restartP90)} ms   aim < 250 ms`);
console.log(`  /healthz gridkeeper             ${fmt(tp.gkRps, 0)} req/s (p99 ${fmt(tp.p99, 2)} ms, ${tp.errors} errors)`);
console.log(`  /healthz bare hono              ${fmt(tp.bareRps, 0)} req/s`);
console.log(`  ratio                           ${fmt(tp.ratio, 2)}   aim >= 0.7`);
console.log(`  RSS idle                        ${fmt(tp.idle.rss)} MB;  peak under load ${fmt(tp.peak.peak)} MB`);
