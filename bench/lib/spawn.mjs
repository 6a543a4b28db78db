// Starts a server process and waits for its JSON "listening" line (gridkeeper's startup line) — bounded by a timeout.
import { spawn } from 'node:child_process';

export function startServer(command, args, { env = {}, timeoutMs = 20000 } = {}) {
  const t0 = performance.now();
  const child = spawn(command, args, { env: { PATH: process.env.PATH, GRIDKEEPER_PORT: '0', GRIDKEEPER_LOG: 'error', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${stderr}`)); }, timeoutMs);
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
      if (m) {
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
