// Whether systemd's MemoryDenyWriteExecute=yes can harden gridkeeper.service: the executable started under the
// kernel's memory-deny-write-execute (prctl PR_SET_MDWE, what systemd uses where the kernel has it; its older seccomp
// filter refuses the same mprotect calls), with V8's JIT and with --jitless (no JIT, and then no WebAssembly), and for
// each mode that serves: start time, /healthz and a device query of 1,000 devices in requests/s over the same load.
// Usage: node build.mjs && node bench/mdwe.mjs   (needs Linux 6.3+ and /usr/bin/python3 for the prctl call)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './lib/spawn.mjs';
import { load } from './lib/load.mjs';
import { accessToken, call } from './lib/http.mjs';

const EXE = process.env.GK_EXE ?? new URL('../dist/gridkeeper', import.meta.url).pathname;
const PASSWORD = 'mdwe-bench-password';
// PR_SET_MDWE = 65, PR_MDWE_REFUSE_EXEC_GAIN = 1; inherited across execve
const MDWE = ['/usr/bin/python3', '-c',
  'import ctypes, os, sys\nif ctypes.CDLL(None).prctl(65, 1, 0, 0, 0): sys.exit("prctl(PR_SET_MDWE) refused")\nos.execv(sys.argv[1], sys.argv[1:])', EXE];

const MODES = [
  { name: 'plain', command: [EXE], env: {} },
  { name: 'MDWE', command: MDWE, env: {} },
  { name: 'MDWE + --jitless', command: MDWE, env: { NODE_OPTIONS: '--jitless' } },
  { name: 'plain + --jitless', command: [EXE], env: { NODE_OPTIONS: '--jitless' } },
];

for (const mode of MODES) {
  const version = spawnSync(mode.command[0], [...mode.command.slice(1), 'version'], { env: { ...process.env, ...mode.env }, encoding: 'utf8' });
  if (version.status !== 0) {
    console.log(`${mode.name.padEnd(18)} dies: ${version.signal ?? `exit ${version.status}`} (${(version.stderr.match(/Check failed[^\n]*/) ?? ['?'])[0]})`);
    continue;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gk-mdwe-'));
  let server;
  try {
    server = await startServer(mode.command[0], [...mode.command.slice(1), '--data-dir', join(dir, 'data')],
      { env: { ...mode.env, GRIDKEEPER_ADMIN_PASSWORD: PASSWORD } });
  } catch (err) {
    console.log(`${mode.name.padEnd(18)} does not serve: ${(String(err.message).match(/\w*Error: [^\n]*/) ?? [err.message])[0]}`);
    rmSync(dir, { recursive: true, force: true });
    continue;
  }
  try {
    const token = await accessToken(server.url, 'admin@localhost', PASSWORD);
    for (let i = 0; i < 1000; i++) await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId: `d${i}`, power: i } } });
    const health = await load({ url: `${server.url}/healthz`, connections: 8, seconds: 5 });
    const query = await load({
      url: `${server.url}/v1/device/query`, method: 'POST', connections: 4, seconds: 5,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
    });
    console.log(`${mode.name.padEnd(18)} starts in ${server.startedMs.toFixed(0)} ms; /healthz ${health.rps.toFixed(0)} req/s; `
      + `device query (1,000) ${query.rps.toFixed(1)} req/s`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
