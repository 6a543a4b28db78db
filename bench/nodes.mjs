// Several gridkeeper processes ("nodes") on one PostgreSQL database: throughput with 1, 2 and 3 nodes, each as a ratio
// to one node on the embedded SQLite database, measured in the same run by the same load generator.
//   targets:   SQLite 1 node; PostgreSQL 1, 2, 3 nodes (PG_NODES). Every target gets a fresh installation: a fresh
//              data dir (SQLite) or a fresh database (PostgreSQL), one role with DEVICES devices and an operator user
//              who is a member of it (monitorManagement on every device through the role).
//   workloads: patch      PATCH /v1/device/{id} replacing /name, the id cycling over the devices;
//              telemetry  POST /v1/telemetry?db=bench&rp=autogen&precision=ms, BATCH lines per request, every
//                         (series, time) new — points/s;
//              read       POST /v1/device/query { filter: { id: [id] } }, the id cycling over the devices.
//              All three as the operator, with one access token (issued by node 1; every node verifies it).
//   load:      one generator in this process, CONNECTIONS requests in flight; request k goes to node k mod N (per
//              request round-robin over the nodes' URLs, keep-alive per node). WARMUP seconds per node first (each
//              fresh process gets about the same JIT warm-up whatever the node count), then SECONDS measured. A 429 is waited out as its Retry-After says and the request sent again (its wait counts in
//              the throughput, not in the latency figures; the 429s are counted). Loopback only.
//   also:      process CPU seconds of each node (/proc/<pid>/stat) over the measurement, of this load generator, and
//              of the PostgreSQL server: its processes serving the benchmark's database (backend title) and all its
//              processes (walwriter, checkpointer, other databases: anything else on the server counts there);
//              the nodes' serialization retries (gridkeeper_database_write_retries_total of /metrics).
// Nodes on one database share the sealing key: every PostgreSQL node gets the same GRIDKEEPER_SECRET_KEY.
// Run: node build.mjs && node bench/nodes.mjs
//   env: SECONDS (5) measured per target and workload, WARMUP (1, seconds per node), CONNECTIONS (12), DEVICES (60), BATCH (100),
//        PG_NODES (1,2,3), WORKLOADS (patch,telemetry,read), GK_EXE (dist/gridkeeper),
//        GRIDKEEPER_TEST_DATABASE_URL (the PostgreSQL server, as for the tests). Notes in nodes.md.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, percentile, postgresCpu, postgresDelta } from './lib/load.mjs';
import { accessToken, call } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';
import { benchDatabase } from './lib/postgres.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const num = (name, dflt) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
  return v;
};
const SECONDS = num('SECONDS', 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
if (!Number.isFinite(WARMUP) || WARMUP < 0) throw new Error('WARMUP: expected a number of seconds >= 0');
const CONNECTIONS = Math.round(num('CONNECTIONS', 12));
const DEVICES = Math.round(num('DEVICES', 60));
const BATCH = Math.round(num('BATCH', 100));
const PG_NODES = (process.env.PG_NODES ?? '1,2,3').split(',').filter(Boolean).map(Number);
const WORKLOADS = (process.env.WORKLOADS ?? 'patch,telemetry,read').split(',').filter(Boolean);
const EXE = process.env.GK_EXE ?? join(root, 'dist', 'gridkeeper');
const ADMIN_PASSWORD = 'bench-password-1';
const OPERATOR = 'operator@bench.test';
const OPERATOR_PASSWORD = 'bench-operator-password-1';
const SECRET_KEY = randomBytes(32).toString('base64'); // shared by every PostgreSQL node of the run

const log = (msg) => console.error(`[bench] ${msg}`);
const fmt = (n, d = 1) => (Number.isFinite(n) ? Number(n).toFixed(d) : '-');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const w of WORKLOADS) if (!['patch', 'telemetry', 'read'].includes(w)) throw new Error(`WORKLOADS: unknown workload ${w}`);
for (const n of PG_NODES) if (!Number.isInteger(n) || n < 1) throw new Error('PG_NODES: expected node counts such as 1,2,3');

// ---------------------------------------------------------------- clean-up, also on failure and Ctrl-C

const cleanups = []; // run last-in first-out
async function cleanUp() {
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    try {
      await step();
    } catch (err) {
      log(`clean-up: ${err.message}`);
    }
  }
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping the nodes, dropping the databases`);
    cleanUp().finally(() => process.exit(130));
  });
}

/** fn, run at most once (a step may run at its place in the run and again in the clean-up) */
const once = (fn) => {
  let done;
  return () => (done ??= Promise.resolve().then(fn));
};

function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(once(() => rmSync(dir, { recursive: true, force: true })));
  return dir;
}

// ---------------------------------------------------------------- nodes

let exe; // a copy of EXE made at the start: every target runs the same build even if dist/ is rebuilt meanwhile

/** One gridkeeper process; `stop` works also after the process died, and ends in SIGKILL after 15 s. */
async function startNode(name, env) {
  const dataDir = tempDir(`gk-bench-nodes-${name}-`);
  const server = await startServer(exe, [], { env: { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dataDir, ...env }, timeoutMs: 60_000 });
  const { child } = server;
  if (interrupted) { child.kill('SIGKILL'); throw new Error('interrupted'); }
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const node = {
    name, url: server.url, pid: child.pid, dataDir,
    get exited() { return child.exitCode !== null || child.signalCode !== null; },
    get exit() { return child.signalCode ?? `code ${child.exitCode}`; },
    get stderr() { return stderr; },
    stop: () => new Promise((resolve) => {
      if (node.exited) { resolve(); return; }
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => { clearTimeout(kill); resolve(); });
      child.kill('SIGTERM');
    }),
  };
  cleanups.push(node.stop);
  return node;
}

/** The nodes of one target: PostgreSQL nodes start one first (migrations, bootstrap), then the others at once. */
async function startTarget(target) {
  if (target.backend === 'sqlite') return [await startNode('sqlite', {})];
  const database = await benchDatabase(`gk_bench_nodes_${process.pid}_${target.nodes}`);
  target.drop = once(database.drop);
  cleanups.push(target.drop);
  if (interrupted) throw new Error('interrupted');
  target.database = new URL(database.url).pathname.slice(1);
  const env = { GRIDKEEPER_DATABASE_URL: database.url, GRIDKEEPER_SECRET_KEY: SECRET_KEY };
  const first = await startNode(`pg${target.nodes}-1`, env);
  const others = await Promise.all(Array.from({ length: target.nodes - 1 }, (_, i) => startNode(`pg${target.nodes}-${i + 2}`, env)));
  return [first, ...others];
}

/** The installation, through node 1: a role under root, DEVICES devices in it, an operator member; the operator's token. */
async function install(url) {
  const admin = await accessToken(url, 'admin@localhost', ADMIN_PASSWORD);
  const flags = (on) => ({ roleManagement: on, userManagement: on, viewManagement: on, deviceManagement: on, reportManagement: on, alarmManagement: on });
  const created = JSON.parse(await call(url, 'POST', '/v1/role?parentRoleId=1', { token: admin, body: { manages: flags(true), role: { name: 'bench site', selfRights: flags(false) } } }));
  const roleId = created.role.id;
  await call(url, 'PUT', `/v1/role/${roleId}/member?userEmail=${OPERATOR}&password=${OPERATOR_PASSWORD}`, { token: admin, body: {} });
  const devices = [];
  for (let i = 0; i < DEVICES; i++) {
    const properties = { nodeId: `bench-${i}`, nodeType: 'powerMeter', isActive: true, name: `meter ${i}`, info: { manufacturer: 'Acme', model: `M-${i % 7}` } };
    devices.push(JSON.parse(await call(url, 'POST', `/v1/device?roleId=${roleId}`, { token: admin, body: { properties } })).device.id);
  }
  return { devices, nodeIds: devices.map((_, i) => `bench-${i}`), token: await accessToken(url, OPERATOR, OPERATOR_PASSWORD) };
}

// ---------------------------------------------------------------- load generator (round-robin over the nodes)

/**
 * `connections` requests in flight until `seconds` have passed; request k (from `counter.next`, which goes on across
 * calls, so a warm-up and the measurement never send the same k) goes to urls[k % urls.length]. A 429 is waited out
 * (Retry-After, default 1 s) and sent again. Returns requests/s and latency percentiles of the answered requests.
 */
async function roundRobin({ urls, method, path, headers, body, connections, seconds, counter, ok = (s) => s >= 200 && s < 300 }) {
  const targets = urls.map((u) => {
    const t = new URL(u);
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(t.hostname)) throw new Error('benchmarks only target loopback');
    return { host: t.hostname, port: t.port, agent: new http.Agent({ keepAlive: true, maxSockets: connections }) };
  });
  const latencies = [];
  const perNode = urls.map(() => 0);
  const statuses = {};
  let errors = 0;
  let throttled = 0;
  let sample;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const send = (target, k) => new Promise((resolve) => {
    const payload = body(k);
    const t0 = performance.now();
    const req = http.request({
      agent: target.agent, host: target.host, port: target.port, path: path(k), method,
      headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => { if (res.statusCode >= 300) chunks.push(c); });
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, retryAfter: res.headers['retry-after'], text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - t0, text: err.message }));
    req.end(payload);
  });
  const worker = async () => {
    while (performance.now() < deadline) {
      const k = counter.next++;
      const node = k % targets.length;
      let r = await send(targets[node], k);
      while (r.status === 429 && performance.now() < deadline) {
        throttled++;
        await sleep(Math.min(Math.max(Number(r.retryAfter) || 1, 0) * 1000, Math.max(0, deadline - performance.now())));
        if (performance.now() >= deadline) break;
        r = await send(targets[node], k);
      }
      if (r.status === 429) break; // the measurement ended while waiting
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (!ok(r.status)) {
        errors++;
        sample ??= `${r.status} ${r.text.slice(0, 200)}`;
        continue;
      }
      latencies.push(r.ms);
      perNode[node]++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - started) / 1000;
  for (const t of targets) t.agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed,
    p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, throttled, statuses, sample, perNode,
  };
}

function workload(name, inst) {
  const auth = { authorization: `Bearer ${inst.token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const device = (k) => inst.devices[k % inst.devices.length];
  if (name === 'patch') {
    return { label: 'PATCH /v1/device/{id} (replace /name)', unit: 'req/s', perRequest: 1, method: 'PATCH', headers: json,
      path: (k) => `/v1/device/${device(k)}`, body: (k) => JSON.stringify([{ op: 'replace', path: '/name', value: `renamed ${k}` }]) };
  }
  if (name === 'read') {
    return { label: 'POST /v1/device/query { filter: { id } }', unit: 'req/s', perRequest: 1, method: 'POST', headers: json,
      path: () => '/v1/device/query', body: (k) => JSON.stringify({ filter: { id: [device(k)] } }) };
  }
  // telemetry: line j of request k is point g = k * BATCH + j: series g mod DEVICES, time index floor(g / DEVICES),
  // one second apart from a day ago — every (series, time) is new, so no write overwrites another
  const t0 = Date.now() - 86_400_000;
  return { label: `POST /v1/telemetry (${BATCH} lines, precision=ms)`, unit: 'points/s', perRequest: BATCH, method: 'POST',
    headers: { ...auth, 'content-type': 'text/plain' },
    path: () => '/v1/telemetry?db=bench&rp=autogen&precision=ms',
    body: (k) => {
      const lines = [];
      for (let j = 0; j < BATCH; j++) {
        const g = k * BATCH + j;
        const s = g % DEVICES;
        const x = (g * 31) % 1000;
        lines.push(`power,nodeId=${inst.nodeIds[s]} watts=${(x * 1.25).toFixed(2)},volts=${(230 + x / 1000).toFixed(3)},energy=${g}i ${t0 + Math.floor(g / DEVICES) * 1000}`);
      }
      return `${lines.join('\n')}\n`;
    } };
}

// ---------------------------------------------------------------- retries of the nodes

async function retriesOf(nodes) {
  let total = 0;
  for (const node of nodes) {
    try {
      const text = await (await fetch(`${node.url}/metrics`)).text();
      const m = /^gridkeeper_database_write_retries_total (\d+)/m.exec(text);
      if (!m) return NaN;
      total += Number(m[1]);
    } catch {
      return NaN;
    }
  }
  return total;
}

// ---------------------------------------------------------------- one target

async function measureTarget(target) {
  const t0 = performance.now();
  const nodes = await startTarget(target);
  const inst = await install(nodes[0].url);
  log(`${target.label}: ${nodes.map((n) => n.url).join(', ')} ready in ${fmt((performance.now() - t0) / 1000)} s`);
  const urls = nodes.map((n) => n.url);
  const results = {};
  for (const name of WORKLOADS) {
    const w = workload(name, inst);
    const counter = { next: 0 };
    const run = (seconds) => roundRobin({ urls, method: w.method, path: w.path, headers: w.headers, body: w.body, connections: CONNECTIONS, seconds, counter });
    if (WARMUP > 0) await run(WARMUP * nodes.length);
    const retries0 = await retriesOf(nodes);
    const pg0 = postgresCpu(target.database);
    const node0 = nodes.map((n) => cpuMs(n.pid));
    const self0 = process.cpuUsage();
    const r = await run(SECONDS);
    const self = process.cpuUsage(self0);
    const nodeCpu = nodes.map((n, i) => (cpuMs(n.pid) - node0[i]) / 1000);
    const pg = target.backend === 'postgres' ? postgresDelta(pg0, postgresCpu(target.database)) : { all: NaN, ours: NaN };
    const retries = (await retriesOf(nodes)) - retries0;
    const dead = nodes.filter((n) => n.exited);
    if (dead.length > 0) throw new Error(`${target.label}: node ${dead[0].name} exited (${dead[0].exit}) during ${name}: ${dead[0].stderr.slice(-1000)}`);
    results[name] = {
      ...r, rate: r.rps * w.perRequest, nodeCpu, clientCpu: (self.user + self.system) / 1e6, pgCpu: pg.ours, pgCpuAll: pg.all, retries,
      nodeCpuPerRequestMs: (nodeCpu.reduce((a, b) => a + b, 0) * 1000) / r.requests,
    };
    log(`${target.label} ${name}: ${fmt(r.rps * w.perRequest, 0)} ${w.unit}, ${r.requests} requests, ${r.errors} errors, ${r.throttled} 429s${r.sample ? ` (first error: ${r.sample})` : ''}`);
  }
  // the target's nodes and database go now, before the next target starts
  await Promise.all(nodes.map((n) => n.stop()));
  for (const n of nodes) rmSync(n.dataDir, { recursive: true, force: true });
  if (target.drop) await target.drop();
  return results;
}

// ---------------------------------------------------------------- report

async function serverSettings() {
  try {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: process.env.GRIDKEEPER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    const show = async (k) => (await client.query(`SHOW ${k}`)).rows[0][k];
    const s = `PostgreSQL ${await show('server_version')}, fsync ${await show('fsync')}, synchronous_commit ${await show('synchronous_commit')}, max_connections ${await show('max_connections')}`;
    await client.end();
    return s;
  } catch (err) {
    return `PostgreSQL settings unknown (${err.message})`;
  }
}

function report(targets, all) {
  const base = all[0];
  for (const name of WORKLOADS) {
    const w = workload(name, { token: '', devices: [0], nodeIds: [''] });
    console.log(`\n${w.label}, ${CONNECTIONS} connections, ${SECONDS} s`);
    console.log(`  ${'target'.padEnd(13)} ${w.unit.padStart(9)} ${'ratio'.padStart(6)} ${'vs PG1'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(6)} ${'429s'.padStart(5)} `
      + `${'retries'.padStart(7)}  ${'CPU s per node'.padEnd(17)} ${'ms/req'.padStart(6)} ${'PG CPU s'.padStart(8)} ${'(all)'.padStart(6)} ${'client'.padStart(6)}`);
    targets.forEach((t, i) => {
      const r = all[i]?.[name];
      if (!r) return;
      const ratio = base?.[name] ? r.rate / base[name].rate : NaN;
      const pg1 = all[targets.findIndex((x) => x.backend === 'postgres' && x.nodes === 1)]?.[name];
      const vsPg1 = t.backend === 'postgres' && pg1 ? r.rate / pg1.rate : NaN;
      console.log(`  ${t.label.padEnd(13)} ${fmt(r.rate, 0).padStart(9)} ${fmt(ratio, 2).padStart(6)} ${fmt(vsPg1, 2).padStart(6)} ${fmt(r.p50, 2).padStart(7)} ${fmt(r.p99, 2).padStart(7)} `
        + `${String(r.errors).padStart(6)} ${String(r.throttled).padStart(5)} ${(t.backend === 'sqlite' ? '-' : fmt(r.retries, 0)).padStart(7)}  `
        + `${r.nodeCpu.map((c) => fmt(c, 2)).join(' / ').padEnd(17)} ${fmt(r.nodeCpuPerRequestMs, 3).padStart(6)} ${fmt(r.pgCpu, 2).padStart(8)} ${fmt(r.pgCpuAll, 2).padStart(6)} ${fmt(r.clientCpu, 2).padStart(6)}`);
      if (r.sample) console.log(`      first error: ${r.sample}`);
    });
  }
  console.log('\nratio: rate / SQLite 1 node; vs PG1: rate / PostgreSQL 1 node; ms/req: the nodes\' CPU per answered request; PG CPU s: PostgreSQL processes serving the '
    + 'benchmark database, (all): every PostgreSQL process, other databases\' work included; client: this load generator');
  console.log(JSON.stringify({
    seconds: SECONDS, connections: CONNECTIONS, devices: DEVICES, batch: BATCH,
    targets: targets.map((t, i) => ({ target: t.label, backend: t.backend, nodes: t.nodes, results: Object.fromEntries(Object.entries(all[i] ?? {}).map(([k, r]) => [k, {
      rate: r.rate, rps: r.rps, requests: r.requests, p50: r.p50, p99: r.p99, errors: r.errors, throttled: r.throttled, retries: r.retries,
      nodeCpu: r.nodeCpu, nodeCpuPerRequestMs: r.nodeCpuPerRequestMs, pgCpu: r.pgCpu, pgCpuAll: r.pgCpuAll, clientCpu: r.clientCpu, perNode: r.perNode,
    }])) })),
  }));
}

async function main() {
  const targets = [
    { label: 'SQLite 1', backend: 'sqlite', nodes: 1 },
    ...PG_NODES.map((n) => ({ label: `PG ${n} node${n > 1 ? 's' : ''}`, backend: 'postgres', nodes: n })),
  ];
  console.log(`gridkeeper nodes benchmark: ${EXE}; ${await serverSettings()}; ${CONNECTIONS} connections round-robin over the nodes, `
    + `${WARMUP} s warm-up per node + ${SECONDS} s measured per target and workload; ${DEVICES} devices; telemetry ${BATCH} lines per request; `
    + `load average ${loadavg().map((l) => fmt(l, 2)).join(' ')}`);
  exe = join(tempDir('gk-bench-nodes-exe-'), 'gridkeeper');
  copyFileSync(EXE, exe);
  chmodSync(exe, 0o755);
  const all = [];
  for (const target of targets) all.push(await measureTarget(target));
  report(targets, all);
  console.log(`load average at the end: ${loadavg().map((l) => fmt(l, 2)).join(' ')}`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => cleanUp());
