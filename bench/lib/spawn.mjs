// Starts a server process and waits for its JSON "listening" line (gridkeeper's startup line) — bounded by a timeout.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** SERVER_ENV='NAME=value …': environment for the servers a benchmark starts, beyond its own (e.g. MALLOC_ARENA_MAX=2). */
export function serverEnv() {
  return Object.fromEntries((process.env.SERVER_ENV ?? '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

/** Builds dist/gridkeeper.cjs (`build.mjs --no-sea`) unless NO_BUILD is set: the bundle the benchmarks start. */
export function buildBundle(log) {
  if (process.env.NO_BUILD) return;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  log('building dist/gridkeeper.cjs');
  execFileSync(process.execPath, [join(root, 'build.mjs'), '--no-sea'], { cwd: root, stdio: 'ignore' });
}

export function startServer(command, args, { env = {}, timeoutMs = 20000 } = {}) {
  const t0 = performance.now();
  const child = spawn(command, args, { env: { PATH: process.env.PATH, GRIDKEEPER_PORT: '0', GRIDKEEPER_LOG: 'error', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${stderr}`)); }, timeoutMs);
    let buf = '';
    let listening = false;
    child.stdout.on('data', (d) => {
      // SERVER_LOG=<file>: every server's log lines appended there too (e.g. with SERVER_ENV='GRIDKEEPER_LOG=debug')
      if (process.env.SERVER_LOG) appendFileSync(process.env.SERVER_LOG, d);
      if (listening) return;
      buf += d;
      const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
      if (m) {
        listening = true;
        clearTimeout(timer);
        resolve({
          url: m[1], child, startedMs: performance.now() - t0,
          stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }),
        });
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${stderr}`)); });
  });
}
