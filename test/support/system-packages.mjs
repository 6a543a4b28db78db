// Debian packages that some suites need (a browser, real InfluxDB clients, ...). test/run.mjs installs the missing ones
// before any test starts, so a fresh machine needs nothing beyond the README's `npm ci && npm test`.
// Each entry: the file whose presence shows the package is installed, the Debian package, and who needs it.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** @type {{ file: string, pkg: string, for: string }[]} */
export const SYSTEM_PACKAGES = [
  { file: '/usr/bin/influx', pkg: 'influxdb-client', for: 'InfluxDB 1.x door: the influx shell (test/influx/real-clients.test.ts)' },
  { file: '/usr/lib/python3/dist-packages/influxdb/__init__.py', pkg: 'python3-influxdb', for: 'InfluxDB 1.x door: the Python client (test/influx/real-clients.test.ts)' },
  { file: '/usr/bin/influxd', pkg: 'influxdb', for: 'InfluxDB 1.x door: the differential tests against InfluxDB 1.6.7 (test/influx/differential.test.ts, chunked.test.ts)' },
  { file: '/usr/bin/chromium', pkg: 'chromium', for: 'console browser tests' },
  { file: '/usr/sbin/pgbouncer', pkg: 'pgbouncer', for: 'nodes behind a pooler in transaction mode (test/http/pooler.test.ts)' },
  { file: '/usr/bin/aarch64-linux-gnu-g++', pkg: 'g++-aarch64-linux-gnu', for: 'the linux-arm64 executable: better-sqlite3 cross-compiled (test/release/arm64.test.ts)' },
  { file: '/usr/bin/qemu-aarch64-static', pkg: 'qemu-user-static', for: 'the linux-arm64 executable run under emulation (test/release/arm64.test.ts)' },
  { file: '/usr/bin/lintian', pkg: 'lintian', for: 'the Debian package checked (test/release/deb.test.ts)' },
  { file: '/usr/sbin/debootstrap', pkg: 'debootstrap', for: 'a throw-away Debian root to install the package into (test/release/deb.test.ts)' },
  { file: '/usr/bin/dpkg-deb', pkg: 'dpkg', for: 'the Debian package built (test/release/deb.test.ts)' },
  { file: '/usr/bin/file', pkg: 'file', for: 'the architecture of the arm64 executable (test/release/arm64.test.ts)' },
  { file: '/usr/sbin/mosquitto', pkg: 'mosquitto', for: 'events to an MQTT broker (test/events/mqtt.test.ts)' },
];

export function ensureSystemPackages(list = SYSTEM_PACKAGES) {
  const missing = [...new Set(list.filter((p) => !existsSync(p.file)).map((p) => p.pkg))];
  if (missing.length === 0) return;
  console.error(`installing Debian packages for the tests: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (args) => spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  const update = run(['update', '-q']);
  const install = update.status === 0 ? run(['install', '-y', '-q', '--no-install-recommends', ...missing]) : update;
  const still = list.filter((p) => !existsSync(p.file));
  if (install.status !== 0 || still.length) {
    throw new Error(`could not install ${missing.join(', ')} with apt-get (run as root on Debian: apt-get install ${missing.join(' ')}); `
      + `needed by ${[...new Set(still.map((p) => p.for))].join(', ') || 'the tests'}`);
  }
}
