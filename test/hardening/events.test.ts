// Events survive kill -9: the executable writes device changes while its webhook receiver is down (deliveries fail
// and wait, or are in flight), is killed with SIGKILL, and after the restart every acknowledged change reaches the
// receiver as its event — at least once, each event id standing for one change. Both backends (PostgreSQL: the
// database server survives the kill).
//
// EVENT_KILLS (default 3), EVENT_WRITES (default 40 per epoch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient } from '../support/http-client.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, dropDatabases, envInt, kill9, loginOver, serverErrors, sleep, startGridkeeper } from '../support/harness.ts';
import { startReceiver, type Receiver } from '../events/receiver.ts';
import { LEASE_MS } from '../../src/events/dispatcher.ts';

const KILLS = envInt('EVENT_KILLS', 3);
const WRITES = envInt('EVENT_WRITES', 40);

test(`${KILLS} kill -9 with events pending: every acknowledged change is delivered after the restart`, { timeout: 240_000 }, async (t) => {
  t.after(dropDatabases);
  const { dir, exe } = isolatedBinary();
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gk-events-')), 'data');
  const env = { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true' };
  // the receiver's port is taken now and closed while "down": deliveries fail with a refused connection
  let rx: Receiver = await startReceiver();
  const url = rx.url;
  await rx.close();
  const acked = new Map<string, number>(); // "device:name" -> how many times acknowledged
  const started = Date.now();
  let run: RunningBinary | undefined;
  let refresh = '';
  let webhook = 0;
  const device: number[] = [];
  const errors: string[] = [];
  try {
    for (let epoch = 0; epoch <= KILLS; epoch++) {
      if (run) errors.push(...serverErrors(run));
      run = await startGridkeeper(exe, dataDir, env);
      const client = httpClient(run.url, { maxSockets: 8 });
      let access: string;
      if (epoch === 0) {
        const s = await loginOver(client, ADMIN_EMAIL, ADMIN_PASSWORD);
        refresh = s.refresh;
        access = s.access;
        const made = await client.request('POST', '/v1/webhook?roleId=1', { token: access, body: { name: 'bms', url, types: ['device.updated'] } });
        assert.equal(made.status, 200, made.text);
        webhook = made.body.webhook.id;
        for (let i = 0; i < 4; i++) {
          const d = await client.request('POST', '/v1/device?roleId=1', { token: access, body: { properties: { name: 'start' } } });
          assert.equal(d.status, 200, d.text);
          device.push(d.body.device.id);
        }
      } else {
        access = (await client.request('GET', '/auth/accesstoken', { token: refresh })).text;
      }
      if (epoch === KILLS) break;
      // changes in parallel; the kill lands while some are in flight
      const writes = Array.from({ length: WRITES }, (_, i) => (async () => {
        const id = device[i % device.length];
        const name = `e${epoch}-w${i}`;
        const r = await client.request('PATCH', `/v1/device/${id}`, { token: access, body: [{ op: 'replace', path: '/name', value: name }] }).catch(() => undefined);
        if (r?.status === 200) acked.set(`${id}:${name}`, (acked.get(`${id}:${name}`) ?? 0) + 1);
      })());
      // the kill lands once a few of this epoch's changes were acknowledged (a count, so a slow machine loads as much as a fast one)
      const target = acked.size + 4 + epoch * 3;
      for (let i = 0; i < 400 && acked.size < target; i++) await sleep(10);
      await kill9(run);
      await Promise.allSettled(writes);
    }
    assert.ok(acked.size >= KILLS, `acknowledged changes before the kills: ${acked.size}`);
    // the receiver comes back on its port: what waits, and every retry now due, reaches it
    rx = await startReceiver(Number(new URL(url).port));
    const seen = () => new Set(rx.received.map((r) => `${r.json.subject.id}:${r.json.data.changes.name.after}`));
    for (let i = 0; i < 120 && [...acked.keys()].some((k) => !seen().has(k)); i++) await sleep(250);
    // a change whose delivery failed twice while the receiver was down waits for its third attempt (5 minutes on):
    // it must be in the outbox, pending, and a replay of the range sends it now
    const client = httpClient(run!.url, { maxSockets: 2 });
    const access = (await client.request('GET', '/auth/accesstoken', { token: refresh })).text;
    const late = [...acked.keys()].filter((k) => !seen().has(k));
    if (late.length > 0) {
      const pending = await client.request('POST', `/v1/webhook/${webhook}/delivery/query`, { token: access, body: { filter: { state: ['pending'] }, limit: 1000 } });
      assert.ok(pending.body.deliveries.length >= late.length, `${late.length} changes not yet delivered, ${pending.body.deliveries.length} deliveries pending`);
      const replay = await client.request('POST', `/v1/webhook/${webhook}/replay`, { token: access, body: { from: new Date(started).toISOString(), to: new Date(Date.now() + 1000).toISOString() } });
      assert.equal(replay.status, 200, replay.text);
      // a delivery the killed process had claimed is not doubled by the replay: it is sent again once its lease ends
      const until = Date.now() + LEASE_MS + 15_000;
      while (Date.now() < until && [...acked.keys()].some((k) => !seen().has(k))) await sleep(250);
    }
    const missing = [...acked.keys()].filter((k) => !seen().has(k));
    assert.deepEqual(missing, [], 'every acknowledged change was delivered');
    // at least once: a repeat carries the same event id, and no event id stands for two changes
    const byId = new Map<string, string>();
    for (const r of rx.received) {
      const change = `${r.json.subject.id}:${r.json.data.changes.name.after}`;
      assert.equal(byId.get(r.json.id) ?? change, change);
      byId.set(r.json.id, change);
    }
    const log = await client.request('POST', `/v1/webhook/${webhook}/delivery/query`, { token: access, body: { filter: { state: ['failed'] } } });
    assert.deepEqual(log.body.deliveries, []);
    errors.push(...serverErrors(run!));
    assert.deepEqual(errors, []);
    t.diagnostic(`${KILLS} kills, ${acked.size} acknowledged changes delivered (${late.length} by a replay after waiting for their retry), ${rx.received.length} deliveries received (${rx.received.length - byId.size} repeats)`);
  } finally {
    if (run) await kill9(run);
    await rx.close();
    void dir;
  }
});
