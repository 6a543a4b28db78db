// Events to an MQTT broker (GRIDKEEPER_MQTT_URL) with the `mqtt` client: QoS 1, each publish settled by the broker's
// PUBACK. The client reconnects by itself; while it is not connected the dispatcher claims nothing for MQTT
// subscriptions, so their events wait in the outbox, not in memory, and the API never waits for the broker.
import { randomBytes } from 'node:crypto';
import { connect } from 'mqtt';
import type { Logger } from '../lib/logger.ts';
import type { MqttSink } from './dispatcher.ts';

const PUBLISH_TIMEOUT_MS = 15_000;

export function connectMqtt(url: string, log: Logger): MqttSink {
  const client = connect(url, {
    clientId: `gridkeeper-${randomBytes(6).toString('hex')}`,
    reconnectPeriod: 2_000,
    connectTimeout: 5_000,
    queueQoSZero: false,
  });
  let reported = false;
  client.on('connect', () => {
    reported = false;
    log.info('connected to the MQTT broker', { host: new URL(url).host });
  });
  client.on('error', (err) => {
    // once per outage: the client retries every 2 s
    if (!reported) log.warn('MQTT broker', { host: new URL(url).host, error: err.message });
    reported = true;
  });
  return {
    connected: () => client.connected,
    publish: (topic, payload) => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no PUBACK within ${PUBLISH_TIMEOUT_MS / 1000} s`)), PUBLISH_TIMEOUT_MS);
      client.publish(topic, payload, { qos: 1 }, (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
    }),
    close: async () => { await client.endAsync(true); },
  };
}
