// Events to the machine's Mosquitto (127.0.0.1:1883, started here when it is not running): QoS 1, topic
// <prefix>/<installation>/<type with / for .>/<subject id>, the role's view of the event; with the broker unreachable
// the API still answers and the events wait in the outbox.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { connect, type MqttClient } from 'mqtt';
import { makeTestApp } from '../support/app.ts';
import { ROOT_ROLE_ID } from '../../src/access/root.ts';
import { addDevice, addMonitors } from '../roles/fixtures.ts';
import { deliveries } from './receiver.ts';

const BROKER = 'mqtt://127.0.0.1:1883';

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => { socket.end(); resolve(true); });
    socket.on('error', () => resolve(false));
  });
}

/** The machine's Mosquitto (test/run.mjs installs it: support/system-packages.mjs), started when it is not running. */
async function ensureMosquitto(): Promise<void> {
  if (await reachable(1883)) return;
  spawnSync('mosquitto', ['-d', '-c', '/etc/mosquitto/mosquitto.conf'], { stdio: 'ignore' });
  for (let i = 0; i < 50 && !(await reachable(1883)); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(await reachable(1883), 'Mosquitto listens on 127.0.0.1:1883');
}

async function subscriber(filter: string): Promise<{ client: MqttClient; messages: { topic: string; json: any; qos: number }[] }> {
  const client = connect(BROKER, { clientId: `gk-test-${Math.random().toString(36).slice(2)}` });
  const messages: { topic: string; json: any; qos: number }[] = [];
  client.on('message', (topic, payload, packet) => messages.push({ topic, json: JSON.parse(payload.toString()), qos: packet.qos }));
  await new Promise<void>((resolve, reject) => { client.once('connect', () => resolve()); client.once('error', reject); });
  await client.subscribeAsync(filter, { qos: 1 });
  return { client, messages };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
}

describe('events: MQTT', () => {
  before(ensureMosquitto);

  it('publishes each event the role may read, QoS 1, on its topic', async (t) => {
    const installation = `it${Math.random().toString(36).slice(2, 10)}`;
    const app = await makeTestApp({ env: { GRIDKEEPER_MQTT_URL: BROKER, GRIDKEEPER_INSTALLATION: installation } });
    const sub = await subscriber(`gridkeeper/${installation}/#`);
    t.after(async () => { await sub.client.endAsync(); await app.close(); });
    const made = await app.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { kind: 'mqtt', name: 'home assistant', types: ['device.*'] } });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.webhook.secret, undefined);
    assert.equal(made.body.webhook.topicPrefix, 'gridkeeper');
    const device = await addDevice(app, { name: 'battery' });
    await addMonitors(app, ROOT_ROLE_ID, device, { mm: true });
    await app.request('PATCH', `/v1/device/${device}`, { token: app.adminToken, body: [{ op: 'replace', path: '/name', value: 'battery 2' }] });
    // the client connects in the background: deliver once it has
    for (let i = 0; i < 100 && (await app.deps.events.drain()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await until(() => sub.messages.length >= 1);
    assert.equal(sub.messages.length, 1);
    const [m] = sub.messages;
    assert.equal(m.topic, `gridkeeper/${installation}/device/updated/${device}`);
    assert.equal(m.qos, 1);
    assert.equal(m.json.type, 'device.updated');
    assert.deepEqual(m.json.data, { changes: { name: { before: 'battery', after: 'battery 2' } } });
    assert.deepEqual((await deliveries(app)).map((d) => d.state), ['delivered']);
  });

  it('with the broker unreachable the API answers and the events wait in the outbox', async (t) => {
    const app = await makeTestApp({ env: { GRIDKEEPER_MQTT_URL: 'mqtt://127.0.0.1:9', GRIDKEEPER_INSTALLATION: 'down' } });
    t.after(() => app.close());
    await app.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { kind: 'mqtt', name: 'ha' } });
    const res = await app.request('POST', '/v1/device?roleId=1', { token: app.adminToken, body: { properties: { name: 'x' } } });
    assert.equal(res.status, 200);
    assert.equal(await app.deps.events.drain(), 0);
    assert.deepEqual((await deliveries(app)).map((d) => [d.type, d.state, d.attempts]), [['device.created', 'pending', 0]]);
  });
});
