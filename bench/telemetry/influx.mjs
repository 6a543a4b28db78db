// InfluxDB 1.x for the telemetry benchmark: found on PATH or installed from Debian's `influxdb` package, started on
// loopback with a throw-away directory and config (fsync on every write, like gridkeeper's synchronous=FULL).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

function which(cmd) {
  try { return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined; } catch { return undefined; }
}

/** The influxd binary: $INFLUXD, PATH, or `apt-get install influxdb` when Debian has the package. */
export function ensureInfluxd(log) {
  const found = process.env.INFLUXD ?? which('influxd');
  if (found) return found;
  let policy = '';
  try { policy = execFileSync('apt-cache', ['policy', 'influxdb'], { encoding: 'utf8' }); } catch { /* no apt */ }
  const candidate = /Candidate:\s*(\S+)/.exec(policy)?.[1];
  if (!candidate || candidate === '(none)') {
    throw new Error('influxd not found and Debian has no influxdb package here (apt-cache policy influxdb shows no candidate); '
      + 'install InfluxDB 1.x and set INFLUXD=/path/to/influxd');
  }
  log(`installing influxdb ${candidate} from Debian (apt-get update && apt-get install -y influxdb)`);
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'influxdb'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  const installed = which('influxd');
  if (!installed) throw new Error('apt-get install influxdb did not provide influxd');
  return installed;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

/**
 * `compaction`: { cacheSnapshotCold, compactFullCold } to have cold shards snapshotted and fully compacted after that
 * long without writes (durations: '2s'), for measuring the disk a compacted store takes; InfluxDB's defaults otherwise.
 */
export async function startInflux(influxd, dir, compaction) {
  const httpPort = await freePort();
  const rpcPort = await freePort();
  for (const d of ['meta', 'data', 'wal']) mkdirSync(join(dir, d), { recursive: true });
  const config = join(dir, 'influxdb.conf');
  writeFileSync(config, `reporting-disabled = true
bind-address = "127.0.0.1:${rpcPort}"
[meta]
  dir = "${join(dir, 'meta')}"
[data]
  dir = "${join(dir, 'data')}"
  wal-dir = "${join(dir, 'wal')}"
  wal-fsync-delay = "0s"
  query-log-enabled = false${compaction ? `
  cache-snapshot-write-cold-duration = "${compaction.cacheSnapshotCold}"
  compact-full-write-cold-duration = "${compaction.compactFullCold}"` : ''}
[retention]
  enabled = false
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:${httpPort}"
  log-enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "error"
`);
  const child = spawn(influxd, ['-config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, HOME: dir } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`influxd exited ${child.exitCode}: ${stderr}`);
    try { if ((await fetch(`${url}/ping`)).status === 204) break; } catch { /* not up yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`influxd did not start: ${stderr}`); }
    await new Promise((r) => setTimeout(r, 100));
  }
  const version = (await fetch(`${url}/ping`)).headers.get('x-influxdb-version');
  return {
    url, child, version,
    stop: () => new Promise((r) => { if (child.exitCode !== null) return r(); child.once('exit', r); child.kill('SIGTERM'); }),
  };
}
