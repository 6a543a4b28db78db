// The gridkeeper command line: parse settings, then serve (default), migrate, back up, add users, print the version.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { ConfigError, parseConfig, type Config } from '../lib/config.ts';
import { createDeps, VERSION } from './runtime.ts';
import { openConfiguredDatabase } from '../db/configured.ts';
import { migrate } from '../db/migrate.ts';
import { vacuumInto } from '../db/operations.ts';
import { startServer } from './server.ts';
import { allocatorTuning, tuneHeapGrowth } from './tuning.ts';
import { isServeCommand, trimAllocatorAfterWork } from './allocator.ts';
import { addUserCommand } from '../roles/users.cli.ts';
import { writePasswordFile } from '../auth/first-password.ts';
import { resetLinkCommand } from '../auth/reset-link.cli.ts';
import { createLicenseCommand } from '../licenses/licenses.cli.ts';
import { pruneTelemetryCommand } from '../telemetry/telemetry.cli.ts';
import { rotateSecretsCommand } from '../auth/secrets.cli.ts';
import { rotateKeysCommand } from '../auth/keys.cli.ts';
import { exportAuditCommand } from '../audit/audit.cli.ts';
import { copyCommand } from './copy.cli.ts';

import type { Command, CommandIo } from '../lib/command.ts';

const HELP = `gridkeeper ${VERSION} — device, role and license management for energy installations

Usage: gridkeeper [command] [options]

Commands:
  serve                     run the HTTP service (default)
  migrate                   apply pending database migrations and exit
  backup <file>             write a consistent copy of the database (safe while the service runs)
  user add <email> [--password P] [--role ID]
                            create a user (a generated password is printed once), optionally as a member of a role
  user reset-link <email>   print a password reset link (60 minutes, usable once) to hand over
  license create --type residential|commercial --duration DAYS [--grid-kw N] [--solar-kw N] [--battery-kw N] [--ev-kw N] [--count N] [--key K] [--customer UUID]
                            create licenses (count 1..1000) and print their keys, one per line; --customer puts them in a new order of that customer
  telemetry prune [--older-than 90d]
                            drop telemetry shards older than the duration (default: the retention setting)
  secrets rotate            seal every TOTP secret under a new key (the key file, or the first of GRIDKEEPER_SECRET_KEY)
  keys rotate               sign tokens with a new key from now on (tokens signed before stay valid until they expire)
  audit export [--from ISO] [--to ISO]
                            print the audit entries from <= time < to as JSON lines (oldest first), for a SIEM
  copy --from <sqlite file|postgres://...> --to <postgres://...|sqlite file> [--skip-telemetry]
                            move a whole installation between SQLite and PostgreSQL (target empty; one transaction; counts verified)
  version                   print the version
  --help                    this text

Options (flags win over environment variables):
  --port N        GRIDKEEPER_PORT          default 8080; 0 picks a free port
  --host H        GRIDKEEPER_HOST          default 127.0.0.1
  --data-dir D    GRIDKEEPER_DATA_DIR      default ./data (holds gridkeeper.db)
  --database-url U  GRIDKEEPER_DATABASE_URL  postgres://user:pass@host:port/db: PostgreSQL instead of the embedded SQLite database
  --database-pool N  GRIDKEEPER_DATABASE_POOL  PostgreSQL connections of this node at most, 1..1000 (default 10)
  --log L         GRIDKEEPER_LOG           info | debug | warn | error
  --trust-proxy   GRIDKEEPER_TRUST_PROXY   take the client IP from X-Forwarded-For
                  GRIDKEEPER_ADMIN_EMAIL   default admin@localhost (first start only)
                  GRIDKEEPER_ADMIN_PASSWORD  first start only; generated and printed once when unset
                  GRIDKEEPER_ADMIN_PASSWORD_FILE  a generated first password goes to this file (0600) instead of stderr;
                                           removed at the admin's first login
  --native-dir D  GRIDKEEPER_NATIVE_DIR    where the single executable unpacks its SQLite addon (default <data-dir>/.native)
  --telemetry-retention R  GRIDKEEPER_TELEMETRY_RETENTION  drop telemetry older than R (e.g. 90d); default off
                  GRIDKEEPER_SECRET_KEY    key(s) sealing TOTP secrets (32 bytes, base64/hex, comma-separated; first seals);
                                           default: <data-dir>/secret.key, created on first start
                  GRIDKEEPER_SMTP_URL      smtp://[user:pass@]host[:port] or smtps://...; unset: no mail is sent
                  GRIDKEEPER_MAIL_FROM     sender of mails, default gridkeeper@localhost
  --public-url U  GRIDKEEPER_PUBLIC_URL    base of links in mails, default http://<host>:<port>
  --audit-retention R      GRIDKEEPER_AUDIT_RETENTION      delete audit entries older than R; default 400d (off keeps all)
                  GRIDKEEPER_EVENT_RETENTION   delete delivered events older than R; default 7d (off keeps all)
                  GRIDKEEPER_MQTT_URL      mqtt://[user:pass@]host[:port] or mqtts://...: MQTT subscriptions publish there
                  GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL  webhooks may reach loopback, link-local and metadata addresses
                  GRIDKEEPER_INSTALLATION  the installation's name in events and MQTT topics (default: a drawn id)
`;

const serveCommand: Command = {
  words: ['serve'],
  usage: 'serve',
  async run(config, args, io) {
    if (args.length) throw new ConfigError(`serve: unexpected argument ${args[0]}`);
    const db = openConfiguredDatabase(config);
    const { deps, migrated } = await createDeps({
      config, db,
      announcePassword: (email, password) => {
        const file = config.adminPasswordFile;
        if (file === undefined) {
          io.err(`gridkeeper: created admin user ${email} with password ${password} (shown once; change it with PUT /user/password)`);
          return;
        }
        writePasswordFile(file, password);
        io.err(`gridkeeper: created admin user ${email}; its password is in ${file} (readable by this user and root; removed at the admin's first login)`);
      },
    });
    if (migrated.length) deps.log.info('migrated', { applied: migrated });
    if (allocatorTuning !== undefined) deps.log.info('allocator', { ...allocatorTuning });
    // Handlers go in before the port opens: a signal that arrives the moment the URL is printed still stops cleanly.
    let requested: string | undefined;
    let wake: () => void = () => {};
    const onSignal = (signal: string) => { requested ??= signal; wake(); };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
    const running = await startServer(deps, (url) => {
      // Always printed, whatever the log level: scripts read the URL (and the port chosen for --port 0) from it.
      io.out(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'listening', url, version: VERSION }));
    });
    tuneHeapGrowth();
    const stopTrimming = trimAllocatorAfterWork((t) => deps.log.debug('allocator trimmed', {
      after: t.after, ms: Math.round(t.ms * 100) / 100, rssBeforeMb: Math.round(t.rssBefore / 1e5) / 10, rssAfterMb: Math.round(t.rssAfter / 1e5) / 10,
    }));
    if (requested === undefined) await new Promise<void>((resolve) => { wake = resolve; });
    deps.log.info('stopping', { signal: requested });
    stopTrimming();
    await running.stop();
    return 0;
  },
};

const migrateCommand: Command = {
  words: ['migrate'],
  usage: 'migrate',
  async run(config, _args, io) {
    const db = openConfiguredDatabase(config);
    try {
      const applied = await migrate(db, Date.now());
      io.out(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    } finally {
      await db.close();
    }
    return 0;
  },
};

const backupCommand: Command = {
  words: ['backup'],
  usage: 'backup <file>',
  async run(config, args, io) {
    if (args.length !== 1) throw new ConfigError('backup: expected exactly one argument, the destination file');
    const dest = resolve(args[0]);
    if (existsSync(dest)) throw new ConfigError(`backup: ${dest} already exists`);
    mkdirSync(dirname(dest), { recursive: true });
    if (config.databaseUrl !== undefined) return backupPostgres(config.databaseUrl, dest, io);
    const db = openConfiguredDatabase(config);
    const tmp = `${dest}.${process.pid}.partial`;
    try {
      await vacuumInto(db, tmp);
      renameSync(tmp, dest);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    } finally {
      await db.close();
    }
    io.out(`backup written to ${dest}`);
    return 0;
  },
};

/** Times a pg_dump that raced a table drop is run again (each race needs a drop inside pg_dump's first moments). */
const PG_DUMP_RETRIES = 5;

/**
 * On PostgreSQL the database server's own tool makes the backup: `pg_dump` (custom format, one consistent snapshot),
 * run here when it is installed; restore with `pg_restore`. Without it, say so (exit 2) rather than half-do it.
 */
function backupPostgres(url: string, dest: string, io: CommandIo): number {
  const tmp = `${dest}.${process.pid}.partial`;
  const dump = () => spawnSync('pg_dump', ['--format=custom', `--file=${tmp}`, `--dbname=${url}`], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  let run = dump();
  // pg_dump lists the tables, then locks each: a telemetry shard dropped in between (retention or `telemetry prune` in a
  // running service) fails it with "relation … does not exist". Nothing is wrong with the database; a new listing is.
  for (let retry = 0; retry < PG_DUMP_RETRIES && run.status !== 0 && / relation "[^"]*" does not exist/.test(run.stderr ?? ''); retry++) {
    rmSync(tmp, { force: true });
    run = dump();
  }
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new ConfigError('backup: on PostgreSQL (GRIDKEEPER_DATABASE_URL) the backup tool is pg_dump, which is not installed here; '
      + 'run pg_dump --format=custom against the database, or install the PostgreSQL client tools');
  }
  if (run.status !== 0) {
    rmSync(tmp, { force: true });
    throw new ConfigError(`backup: pg_dump failed: ${(run.stderr ?? '').trim() || `exit ${run.status}`}`);
  }
  renameSync(tmp, dest);
  io.out(`backup written to ${dest} (pg_dump custom format: restore with pg_restore)`);
  return 0;
}

const versionCommand: Command = {
  words: ['version'],
  usage: 'version',
  async run(_config, _args, io) { io.out(VERSION); return 0; },
};

export const commands: Command[] = [
  serveCommand, migrateCommand, backupCommand, addUserCommand, resetLinkCommand, createLicenseCommand, pruneTelemetryCommand, rotateSecretsCommand, rotateKeysCommand, exportAuditCommand, copyCommand, versionCommand,
];

export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') { io.out(HELP); return 0; }
  if (argv[0] === '--version') { io.out(VERSION); return 0; }
  try {
    // The command is the leading words (`user add ...`); everything after them is options and arguments.
    const command = [...commands].sort((a, b) => b.words.length - a.words.length)
      .find((c) => c.words.every((w, i) => argv[i] === w)) ?? (isServeCommand(argv) ? serveCommand : undefined);
    if (!command) throw new ConfigError(`unknown command "${argv[0]}" (see gridkeeper --help)`);
    const rest = command === serveCommand && argv[0] !== 'serve' ? argv : argv.slice(command.words.length);
    const { config, rest: args } = parseConfig(env, rest);
    return await command.run(config, args, io);
  } catch (err) {
    if (err instanceof ConfigError) { io.err(`gridkeeper: ${err.message}`); return 2; }
    throw err;
  }
}

