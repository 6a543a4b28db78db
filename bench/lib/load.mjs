// A small HTTP load generator for the benchmarks: C keep-alive connections on loopback, each sending requests back to
// back, stopping after `requests` answers or `seconds`, whichever comes first (always bounded). Returns requests/s and
// latency percentiles. The same generator measures every target in a run, so ratios compare like with like.
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * @param {object} o
 * @param {string} o.url  full URL (http://127.0.0.1:port/path)
 * @param {string} [o.method]
 * @param {Record<string,string>} [o.headers]
 * @param {string | (() => string)} [o.body]
 * @param {number} [o.connections]
 * @param {number} [o.requests]  total cap
 * @param {number} [o.seconds]   time cap
 * @param {(status: number) => boolean} [o.ok]  which statuses count as success (default 2xx)
 */
export async function load({ url, method = 'GET', headers = {}, body, connections = 16, requests = 20000, seconds = 10, ok }) {
  const target = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname)) throw new Error('benchmarks only target loopback');
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  const statuses = {};
  let sent = 0;
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const isOk = ok ?? ((s) => s >= 200 && s < 300);
  const one = () => new Promise((resolve) => {
    const payload = typeof body === 'function' ? body() : body;
    const t0 = performance.now();
    const req = http.request({
      agent, host: target.hostname, port: target.port, path: target.pathname + target.search, method,
      headers: payload !== undefined ? { ...headers, 'content-length': Buffer.byteLength(payload) } : headers,
    }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (!isOk(res.statusCode)) errors++;
        resolve();
      });
    });
    req.on('error', () => { errors++; resolve(); });
    if (payload !== undefined) req.write(payload);
    req.end();
  });
  const worker = async () => {
    while (sent < requests && performance.now() < deadline) {
      sent++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds: elapsed,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    statuses,
  };
}

/** Peak and current RSS of a process in MB, from /proc (Linux). */
export function rssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const get = (k) => Number((status.match(new RegExp(`${k}:\\s+(\\d+) kB`)) ?? [])[1] ?? NaN) / 1024;
    return { rss: get('VmRSS'), peak: get('VmHWM') };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux; clock ticks of 10 ms). NaN if gone. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** CPU ms of every postgres process now: pid -> { ms, ours } (ours: a backend of `database`). */
export function postgresCpu(database) {
  const out = new Map();
  let pids;
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes(' (postgres) ')) continue;
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.set(pid, { ms: cpuMs(pid), ours: database !== undefined && title.includes(` ${database} `) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds between two postgresCpu snapshots (processes that ended in between are missing; new ones count from 0). */
export function postgresDelta(before, after) {
  let all = 0;
  let ours = 0;
  for (const [pid, a] of after) {
    const d = (a.ms - (before.get(pid)?.ms ?? 0)) / 1000;
    if (!Number.isFinite(d)) continue;
    all += d;
    if (a.ours) ours += d;
  }
  return { all, ours };
}
