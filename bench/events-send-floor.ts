// The floor of sending one webhook per event, in-process, CPU per POST of this process (the receiver is a child
// process that answers 204 and tells nobody, so its work is not counted here). COUNT signed POSTs of a like body, ROUNDS
// times, each way:
//   node:http   keep-alive Agent, 8 at a time
//   postWebhook the delivery's own client (src/events/webhook-client.ts), 8 at a time on 8 connections
//   pipelined   8 requests written at once on one kept connection, the 8 answers read from it (HTTP/1.1 pipelining;
//               not what deliveries do: what paying one write for several requests would save)
//   worker      postWebhook in a worker thread, fed batches of 8 prepared bodies by postMessage: CPU of the main thread
//               (what the API's thread would pay) and of the whole process (what a CPU-bound machine pays)
// Per-thread CPU is read from /proc/self/task/<tid>/stat (clock ticks), so this runs on Linux only.
// Run: node --import ./test/support/register.mjs bench/events-send-floor.ts   (env COUNT=8000, ROUNDS=3)
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { postWebhook } from '../src/events/webhook-sender.ts';

const COUNT = Number(process.env.COUNT ?? 8000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const KEY = Buffer.alloc(32, 7);

const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
const rx = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port: number = await new Promise((resolve) => rx.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString()))));
const url = `http://127.0.0.1:${port}/hook`;

function body(i: number): string {
  return JSON.stringify({ id: `evt_AZrM0123456789abcde${i}`, type: 'device.updated', time: new Date().toISOString(), installation: '0123456789abcdef',
    subject: { kind: 'device', id: 1 }, data: { changes: { n: { before: i, after: i + 1 } } } });
}

function headers(b: string, i: number): Record<string, string> {
  const id = `evt_AZrM0123456789abcde${i}`;
  const ts = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json', 'user-agent': 'gridkeeper/bench', 'webhook-id': id, 'webhook-timestamp': String(ts),
    'webhook-signature': `v1,${createHmac('sha256', KEY).update(`${id}.${ts}.${b}`).digest('base64')}`,
  };
}

const ticksPerSecond = 100;
function threadMs(tid: number): number {
  const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / ticksPerSecond;
}
const processUs = () => { const c = process.cpuUsage(); return c.user + c.system; };

async function nodeHttp(n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let next = 0;
  const post = (i: number) => new Promise<void>((resolve, reject) => {
    const b = body(i);
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers(b, i), 'content-length': String(Buffer.byteLength(b)) } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(b);
  });
  await Promise.all(Array.from({ length: 8 }, async () => { while (next < n) await post(next++); }));
  agent.destroy();
}

async function lean(n: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < n) {
      const i = next++;
      const b = body(i);
      const r = await postWebhook(url, headers(b, i), b, { allowInternal: true });
      if (r.error !== null) throw new Error(r.error);
    }
  }));
}

async function pipelined(n: number, depth = 8): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((r) => socket.once('connect', r));
  let answered = 0;
  let waiting: (() => void) | undefined;
  let tail = '';
  socket.on('data', (chunk: Buffer) => {
    const text = tail + chunk.toString('latin1');
    let at = 0;
    for (;;) {
      const end = text.indexOf('\r\n\r\n', at);
      if (end < 0) break;
      if (!text.startsWith('HTTP/1.1 204', at)) throw new Error('unexpected answer');
      answered++;
      at = end + 4;
    }
    tail = text.slice(at);
    waiting?.();
  });
  for (let sent = 0; sent < n;) {
    const parts: Buffer[] = [];
    const batch = Math.min(depth, n - sent);
    for (let k = 0; k < batch; k++, sent++) {
      const b = Buffer.from(body(sent));
      let head = `POST /hook HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`;
      const h = headers(b.toString(), sent);
      for (const name in h) head += `${name}: ${h[name]}\r\n`;
      parts.push(Buffer.from(`${head}content-length: ${b.length}\r\n\r\n`, 'latin1'), b);
    }
    socket.write(Buffer.concat(parts));
    while (answered < sent) await new Promise<void>((r) => { waiting = r; });
  }
  socket.destroy();
}

async function inWorker(n: number): Promise<{ main: number; total: number }> {
  // the worker loads the TypeScript source through this process's loader (execArgv is inherited)
  const worker = new Worker(new URL('./lib/send-worker.ts', import.meta.url), { workerData: { url } });
  await new Promise((r) => worker.once('message', r));
  const t0 = threadMs(process.pid);
  const c0 = processUs();
  let next = 0;
  let done = 0;
  await new Promise<void>((resolve) => {
    const feed = () => {
      while (next < n && next - done < 8) {
        const batch = [];
        for (let k = 0; k < 8 && next < n; k++, next++) {
          const b = body(next);
          batch.push({ headers: headers(b, next), body: b });
        }
        worker.postMessage(batch);
      }
    };
    worker.on('message', (count: number) => {
      done += count;
      if (done >= n) resolve();
      else feed();
    });
    feed();
  });
  const main = threadMs(process.pid) - t0;
  const total = (processUs() - c0) / 1000;
  await worker.terminate();
  return { main, total };
}

const per = (us: number) => (us / COUNT).toFixed(1);
const rows: Record<string, string[]> = { 'node:http': [], postWebhook: [], pipelined: [], 'worker: main thread': [], 'worker: process': [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of [['node:http', nodeHttp], ['postWebhook', lean], ['pipelined', pipelined]] as const) {
      const c0 = processUs();
      await fn(COUNT);
      rows[name].push(per(processUs() - c0));
    }
    const w = await inWorker(COUNT);
    rows['worker: main thread'].push(per(w.main * 1000));
    rows['worker: process'].push(per(w.total * 1000));
  }
  console.log(`${COUNT} signed POSTs a round, ${ROUNDS} rounds, CPU per POST of this process (us), load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}:`);
  for (const [name, values] of Object.entries(rows)) console.log(`  ${name.padEnd(22)} ${values.join(', ')}`);
} finally {
  rx.kill();
}
process.exit(0);
