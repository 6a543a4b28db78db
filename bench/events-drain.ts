// Server CPU per webhook delivery, in-process: EVENTS device.updated events written to the outbox of an in-memory
// database with one subscription, then drained to a receiver in a child process (bench/lib/events-receiver.mjs);
// process.cpuUsage over the drain, per delivery, ROUNDS times. Beside it, the floor: the same number of bare
// keep-alive POSTs of a like body with node:http, 8 at a time, from this process, and the same signed POSTs through
// postWebhook (the delivery's own client, src/events/webhook-client.ts) — what any delivery by this node costs before
// its outbox bookkeeping.
// Run: node --import ./test/support/register.mjs bench/events-drain.ts   (env EVENTS=8000, ROUNDS=3)
import { fork } from 'node:child_process';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { makeTestApp, ROOT_ROLE_ID } from '../test/support/app.ts';
import { writeEvents } from '../src/events/outbox.ts';
import { postWebhook } from '../src/events/webhook-sender.ts';

const EVENTS = Number(process.env.EVENTS ?? 8000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const rx = fork(new URL('./lib/events-receiver.mjs', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const url: string = await new Promise((resolve) => rx.on('message', (m: { url?: string }) => { if (m.url) resolve(m.url); }));
const app = await makeTestApp({ env: { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true' } });
const perOp = (c: NodeJS.CpuUsage, n: number) => ((c.user + c.system) / n).toFixed(1);

try {
  const made = await app.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { name: 'bench', url, types: ['device.*'] } });
  if (made.status !== 200) throw new Error(made.text);
  const drains: string[] = [];
  const floors: string[] = [];
  const leans: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await app.deps.db.tx((tx) => writeEvents(tx, Array.from({ length: EVENTS }, (_, i) => ({
      type: 'device.updated', at: app.clock.now(), subject: 'device', subjectId: '1', audience: 'device' as const, roleId: null, deviceId: 1,
      data: { changes: { n: { before: i, after: i + 1 } } },
    }))));
    let c0 = process.cpuUsage();
    const sent = await app.deps.events.drain();
    if (sent !== EVENTS) throw new Error(`${sent} of ${EVENTS} delivered`);
    drains.push(perOp(process.cpuUsage(c0), sent));
    c0 = process.cpuUsage();
    await barePosts(EVENTS);
    floors.push(perOp(process.cpuUsage(c0), EVENTS));
    c0 = process.cpuUsage();
    await leanPosts(EVENTS);
    leans.push(perOp(process.cpuUsage(c0), EVENTS));
  }
  console.log(`[sqlite in memory] ${EVENTS} events a round, ${ROUNDS} rounds: CPU per delivery ${drains.join(', ')} µs `
    + `(claim, rights, payload, signature, POST, outcome and attempt rows); bare signed POSTs of node:http ${floors.join(', ')} µs each; `
    + `the same through postWebhook (the delivery's own client) ${leans.join(', ')} µs each`);
} finally {
  await app.close();
  rx.kill();
}

function sample(): string {
  return JSON.stringify({ id: 'evt_AZrM0123456789abcdefgh', type: 'device.updated', time: new Date().toISOString(), installation: '0123456789abcdef',
    subject: { kind: 'device', id: 1 }, data: { changes: { n: { before: 1, after: 2 } } } });
}

async function leanPosts(n: number): Promise<void> {
  const body = sample();
  let left = n;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (left-- > 0) {
      const r = await postWebhook(url, {
        'content-type': 'application/json', 'webhook-id': 'evt_x', 'webhook-timestamp': '1',
        'webhook-signature': `v1,${createHmac('sha256', 'key').update(body).digest('base64')}`,
      }, body, { allowInternal: true });
      if (r.error !== null) throw new Error(r.error);
    }
  }));
}

async function barePosts(n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const body = JSON.stringify({ id: 'evt_AZrM0123456789abcdefgh', type: 'device.updated', time: new Date().toISOString(), installation: '0123456789abcdef',
    subject: { kind: 'device', id: 1 }, data: { changes: { n: { before: 1, after: 2 } } } });
  let left = n;
  const post = () => new Promise<void>((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: {
      'content-type': 'application/json', 'webhook-id': 'evt_x', 'webhook-timestamp': '1',
      'webhook-signature': `v1,${createHmac('sha256', 'key').update(body).digest('base64')}`, 'content-length': String(Buffer.byteLength(body)),
    } }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', () => resolve());
    req.end(body);
  });
  await Promise.all(Array.from({ length: 8 }, async () => { while (left-- > 0) await post(); }));
  agent.destroy();
}
process.exit(0);
