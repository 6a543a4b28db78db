// The events of a running node: the installation's name, the MQTT broker when one is configured, and the delivery
// worker (started with the HTTP server, stopped before the database closes).
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Config } from '../lib/config.ts';
import type { Db } from '../db/open.ts';
import type { Logger } from '../lib/logger.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import type { EventService } from '../context/deps.ts';
import { createDispatcher } from './dispatcher.ts';
import { installationId, releaseLeases } from './events.store.ts';
import { connectMqtt } from './mqtt-publisher.ts';

export interface EventsOptions {
  db: Db;
  config: Config;
  now: () => number;
  log: Logger;
  secrets: SecretBox;
  registry: Registry;
  version: string;
}

export async function createEvents(o: EventsOptions): Promise<EventService> {
  const installation = o.config.installation ?? await installationId(o.db, randomBytes(8).toString('hex'));
  // SQLite: one process serves the file, so a claim still in it was left by a process that stopped mid-delivery
  if (o.db.backend === 'sqlite') await releaseLeases(o.db, o.now());
  return createDispatcher({
    db: o.db, now: o.now, log: o.log, secrets: o.secrets, installation, version: o.version, registry: o.registry,
    allowInternal: o.config.webhookAllowInternal,
    retentionMs: o.config.eventRetention,
    mqtt: o.config.mqttUrl === undefined ? undefined : connectMqtt(o.config.mqttUrl, o.log),
  });
}
