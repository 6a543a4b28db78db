// Every setting, from environment variables and command-line flags, parsed once by one valibot schema.
// Flags win over the environment. A bad value is a ConfigError: main prints it and exits with code 2.
import * as v from 'valibot';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { DURATION_HINT, parseDurationMs } from './duration.ts';

/** Local addresses (admin@localhost) are normal on an appliance, so no TLD is required. */
export const EMAIL = /^[^\s@]{1,128}@[^\s@]{1,128}$/;

const bool = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.picklist(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], 'expected true or false'),
  v.transform((s) => ['1', 'true', 'yes', 'on'].includes(s)),
);

const port = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^\d{1,5}$/, 'expected an integer from 0 to 65535'),
  v.transform(Number),
  v.maxValue(65535, 'expected an integer from 0 to 65535'),
);

/** Connections of a node's PostgreSQL pool. */
const poolSize = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^\d{1,4}$/, 'expected an integer from 1 to 1000'),
  v.transform(Number),
  v.minValue(1, 'expected an integer from 1 to 1000'),
  v.maxValue(1000, 'expected an integer from 1 to 1000'),
);

/** A service's URL: `<scheme>://[user:pass@]host[:port]` or its TLS form `<scheme>s://…`; credentials percent-encoded. */
const serviceUrl = (scheme: string) => v.pipe(
  v.string(),
  v.trim(),
  v.check((s) => {
    try {
      const url = new URL(s);
      return (url.protocol === `${scheme}:` || url.protocol === `${scheme}s:`) && url.hostname !== '';
    } catch {
      return false;
    }
  }, `expected ${scheme}://[user:password@]host[:port] or ${scheme}s://...`),
);

/** `smtp://[user:pass@]host[:port]` or `smtps://…` (TLS from the first byte). */
const smtpUrl = serviceUrl('smtp');

/**
 * A PostgreSQL connection URL: `postgres://` or `postgresql://`, with user, password, host, port, database and
 * parameters such as `?sslmode=require` or `?host=/var/run/postgresql` (a socket directory) as libpq reads them.
 */
const databaseUrl = v.pipe(
  v.string(),
  v.trim(),
  v.check((s) => {
    try {
      const url = new URL(s);
      return url.protocol === 'postgres:' || url.protocol === 'postgresql:';
    } catch {
      return false;
    }
  }, 'expected postgres://user:password@host:port/database (or postgresql://...); unset for the embedded SQLite database'),
);

/** A sender: `address` or `Display Name <address>`. */
const mailFrom = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^(?:[^<>\r\n"]{0,128}<[^\s@<>]{1,128}@[^\s@<>]{1,128}>|[^\s@<>]{1,128}@[^\s@<>]{1,128})$/, 'expected an e-mail address or Name <address>'),
);

/** The URL users reach this service at (for links in e-mails); stored without a trailing slash. */
const publicUrl = v.pipe(
  v.string(),
  v.trim(),
  v.check((s) => {
    try {
      const url = new URL(s);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
    } catch {
      return false;
    }
  }, 'expected an http:// or https:// URL without query or fragment'),
  v.transform((s) => s.replace(/\/+$/, '')),
);

/** A retention: a duration (`90d`) in ms, or null for `off` (keep everything). */
const retention = v.pipe(
  v.string(),
  v.check((s) => parseDurationMs(s) !== undefined, DURATION_HINT),
  v.transform((s) => parseDurationMs(s) ?? null),
);

/** `mqtt://` or `mqtts://`, with user and password when the broker wants them. */
const mqttUrl = serviceUrl('mqtt');

export const ConfigSchema = v.strictObject({
  port: v.optional(port, '8080'),
  host: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty('expected a host name or address')), '127.0.0.1'),
  dataDir: v.optional(v.pipe(v.string(), v.nonEmpty('expected a directory'), v.transform((d) => resolve(d))), './data'),
  adminEmail: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.regex(EMAIL, 'expected an e-mail address')), 'admin@localhost'),
  adminPassword: v.optional(v.pipe(v.string(), v.minLength(10, 'expected at least 10 characters'))),
  /** where a generated first admin password goes instead of stderr (a service has no terminal); see auth/first-password.ts */
  adminPasswordFile: v.optional(v.pipe(v.string(), v.nonEmpty('expected a file path'), v.transform((f) => resolve(f)))),
  trustProxy: v.optional(bool, 'false'),
  log: v.optional(v.picklist(['debug', 'info', 'warn', 'error'], 'expected debug, info, warn or error'), 'info'),
  /** where the embedded native addon is written before loading; must allow exec (a noexec /tmp breaks dlopen) */
  nativeDir: v.optional(v.pipe(v.string(), v.nonEmpty(), v.transform((d) => resolve(d)))),
  /** telemetry older than this (ms) is dropped, whole shards at a time; null keeps everything */
  /** GRIDKEEPER_SECRET_KEY (environment only: a flag would show in the process list); see auth/secret-box.ts */
  secretKey: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty('expected one or more comma-separated 32-byte keys (base64 or hex)'))),
  telemetryRetention: v.optional(retention, 'off'),
  /** how often closed telemetry windows are looked for and sealed into blocks (docs/api.md#telemetry-blocks) */
  telemetrySealInterval: v.optional(v.pipe(
    v.string(),
    v.check((s) => (parseDurationMs(s) ?? 0) >= 1000, 'expected a duration of at least 1s such as 30s, 1m or 5m'),
    v.transform((s) => parseDurationMs(s)!),
  ), '1m'),
  /** GRIDKEEPER_DATABASE_URL: PostgreSQL 15+ instead of the embedded SQLite database in the data dir */
  databaseUrl: v.optional(databaseUrl),
  /** GRIDKEEPER_DATABASE_POOL: connections this node opens to PostgreSQL at most (docs/scale-out.md) */
  databasePool: v.optional(poolSize, '10'),
  /** outgoing mail (password reset links); unset: no mail is sent, `gridkeeper user reset-link` prints links instead */
  smtpUrl: v.optional(smtpUrl),
  mailFrom: v.optional(mailFrom, 'gridkeeper@localhost'),
  /** base of links in e-mails; default http://<host>:<port> */
  publicUrl: v.optional(publicUrl),
  /** audit entries older than this (ms) are deleted; null keeps everything */
  auditRetention: v.optional(retention, '400d'),
  /** GRIDKEEPER_MQTT_URL: events go to this broker too (docs/api.md#mqtt) */
  mqttUrl: v.optional(mqttUrl),
  /** webhooks may reach loopback, link-local and metadata addresses (docs/api.md#webhook-safety) */
  webhookAllowInternal: v.optional(bool, 'false'),
  /** delivered events older than this (ms) are deleted; null keeps them */
  eventRetention: v.optional(retention, '7d'),
  /** the installation's name in events and MQTT topics; default: an id drawn once and kept in the database */
  installation: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1 to 64 letters, digits, - or _'))),
});

export type Config = v.InferOutput<typeof ConfigSchema>;
export type LogLevel = Config['log'];

const ENV: Record<string, keyof v.InferInput<typeof ConfigSchema>> = {
  GRIDKEEPER_PORT: 'port',
  GRIDKEEPER_HOST: 'host',
  GRIDKEEPER_DATA_DIR: 'dataDir',
  GRIDKEEPER_ADMIN_EMAIL: 'adminEmail',
  GRIDKEEPER_ADMIN_PASSWORD: 'adminPassword',
  GRIDKEEPER_ADMIN_PASSWORD_FILE: 'adminPasswordFile',
  GRIDKEEPER_TRUST_PROXY: 'trustProxy',
  GRIDKEEPER_LOG: 'log',
  GRIDKEEPER_NATIVE_DIR: 'nativeDir',
  GRIDKEEPER_TELEMETRY_RETENTION: 'telemetryRetention',
  GRIDKEEPER_TELEMETRY_SEAL_INTERVAL: 'telemetrySealInterval',
  GRIDKEEPER_SECRET_KEY: 'secretKey',
  GRIDKEEPER_DATABASE_URL: 'databaseUrl',
  GRIDKEEPER_DATABASE_POOL: 'databasePool',
  GRIDKEEPER_SMTP_URL: 'smtpUrl',
  GRIDKEEPER_MAIL_FROM: 'mailFrom',
  GRIDKEEPER_PUBLIC_URL: 'publicUrl',
  GRIDKEEPER_AUDIT_RETENTION: 'auditRetention',
  GRIDKEEPER_MQTT_URL: 'mqttUrl',
  GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'webhookAllowInternal',
  GRIDKEEPER_EVENT_RETENTION: 'eventRetention',
  GRIDKEEPER_INSTALLATION: 'installation',
};

const FLAGS: Record<string, keyof v.InferInput<typeof ConfigSchema>> = {
  '--port': 'port',
  '--host': 'host',
  '--data-dir': 'dataDir',
  '--log': 'log',
  '--trust-proxy': 'trustProxy',
  '--native-dir': 'nativeDir',
  '--telemetry-retention': 'telemetryRetention',
  '--public-url': 'publicUrl',
  '--audit-retention': 'auditRetention',
  '--database-url': 'databaseUrl',
  '--database-pool': 'databasePool',
};

export class ConfigError extends Error {}

const NAMES = Object.fromEntries([
  ...Object.entries(ENV).map(([env, key]) => [key, env]),
]) as Record<string, string>;

/** Parses settings from the environment plus `--flag value` / `--flag=value` pairs; returns the flags it did not know. */
export function parseConfig(env: NodeJS.ProcessEnv, argv: string[]): { config: Config; rest: string[] } {
  const input: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') input[key] = value;
  }
  // The settings' flags are taken out; every other argument (a command's own flags, positionals) is handed on as is.
  const rest: string[] = [];
  const options = Object.fromEntries(Object.entries(FLAGS).map(([flag, key]) => [flag.slice(2), { type: key === 'trustProxy' ? 'boolean' as const : 'string' as const }]));
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    const key = token.kind === 'option' ? FLAGS[token.rawName] : undefined;
    if (token.kind !== 'option' || key === undefined) {
      rest.push(argv[token.index]);
      continue;
    }
    // `--trust-proxy` alone means true; `--trust-proxy=false` says it explicitly
    const value = key === 'trustProxy' ? token.value ?? 'true' : token.value;
    if (value === undefined || (!token.inlineValue && value.startsWith('--'))) throw new ConfigError(`${token.rawName}: a value is required`);
    input[key] = value;
  }
  const parsed = v.safeParse(ConfigSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const key = String(issue.path?.[0]?.key ?? '');
    const flag = Object.entries(FLAGS).find(([, k]) => k === key)?.[0];
    const where = [NAMES[key], flag].filter(Boolean).join(' / ') || key;
    // the SMTP and database URLs may carry a password: never echo them
    const got = key === 'smtpUrl' || key === 'databaseUrl' || key === 'mqttUrl' ? '' : ` (got ${JSON.stringify(input[key])})`;
    throw new ConfigError(`${where}: ${issue.message}${got}`);
  }
  return { config: parsed.output, rest };
}

/** Where links in e-mails point: GRIDKEEPER_PUBLIC_URL, or the address the service listens on. */
export function publicUrlOf(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}
