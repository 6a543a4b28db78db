// A PgBouncer of one test, in transaction mode, in front of the test PostgreSQL server: each transaction of a client
// may run on a different server connection, and nothing of a session (a session-level lock, a prepared statement
// kept by name) survives from one transaction to the next. Started on a free port, trust auth; stop() ends it.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts, freePort } from './ports.ts';

export interface PgBouncer {
  port: number;
  /** `url` with its host and port replaced by the pooler's */
  via(url: string): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(target: { host: string; port: number }, poolSize = 4): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'gk-pgbouncer-'));
  chmodSync(dir, 0o755); // read by the postgres user when started as root (pgbouncer -u)
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]', `* = host=${target.host} port=${target.port}`,
    '[pgbouncer]', 'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =',
    'auth_type = trust', `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction', `default_pool_size = ${poolSize}`, 'max_client_conn = 500',
    // what the pg driver sends at connect
    'ignore_startup_parameters = extra_float_digits,options', 'server_reset_query =', 'log_connections = 0', 'log_disconnections = 0',
  ].join('\n'));
  for (const f of ['users.txt', 'pgbouncer.ini']) chmodSync(join(dir, f), 0o644);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // listening once a connection is accepted
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output}`);
    if (await accepts(port)) break;
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`pgbouncer did not listen within 10 s: ${output}`); }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    via(url) {
      const u = new URL(url);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
