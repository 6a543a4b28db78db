// Real InfluxDB 1.6.7 (Debian `influxdb`, test/support/system-packages.mjs) for tests that compare answers: started on
// loopback ports with a temporary config and directory, authentication off, nothing reported or stored beside it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.ts';

export interface RunningInfluxd {
  child: ChildProcess;
  port: number;
  url: string;
  stop(): void;
}

export async function startInfluxd(dir: string): Promise<RunningInfluxd> {
  const port = await freePort();
  const meta = await freePort();
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'influxd.conf');
  writeFileSync(conf, `reporting-disabled = true
bind-address = "127.0.0.1:${meta}"
[meta]
  dir = "${join(dir, 'meta')}"
[data]
  dir = "${join(dir, 'data')}"
  wal-dir = "${join(dir, 'wal')}"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:${port}"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
`);
  const child = spawn('/usr/bin/influxd', ['-config', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(`${url}/ping`)).status === 204) return { child, port, url, stop: () => { child.kill('SIGTERM'); } };
    } catch { /* not up yet */ }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`influxd did not start: ${stderr.slice(-2000)}`);
}
