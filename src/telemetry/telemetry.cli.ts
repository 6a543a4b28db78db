// `gridkeeper telemetry prune [--older-than 90d]`: drops every shard table whose whole window is older than the
// duration (default: the retention setting), on either backend. Safe while the service runs: on SQLite the service
// notices the dropped tables through the schema cookie before its next telemetry request; on PostgreSQL queries read
// the shard list in their own snapshot, and a writer that meets a dropped table runs again with a fresh catalogue.
import { ConfigError } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { openConfiguredDatabase } from '../db/configured.ts';
import { migrate } from '../db/migrate.ts';
import { DURATION_HINT, parseDurationMs } from '../lib/duration.ts';
import { pruneShards } from './telemetry.store.ts';

const USAGE = 'telemetry prune [--older-than DURATION]';


export const pruneTelemetryCommand: Command = {
  words: ['telemetry', 'prune'],
  usage: USAGE,
  async run(config, args, io) {
    const given = parseFlags('telemetry prune', USAGE, args, ['older-than']).values['older-than'];
    let olderThanMs: number | null;
    if (given !== undefined) {
      const parsed = parseDurationMs(given);
      if (parsed === undefined) throw new ConfigError(`telemetry prune: --older-than: ${DURATION_HINT} (got ${JSON.stringify(given)})`);
      if (parsed === null) throw new ConfigError('telemetry prune: --older-than must be a duration greater than 0');
      olderThanMs = parsed;
    } else {
      olderThanMs = config.telemetryRetention;
      if (olderThanMs === null) {
        throw new ConfigError('telemetry prune: give --older-than DURATION (no GRIDKEEPER_TELEMETRY_RETENTION / --telemetry-retention is set)');
      }
    }
    const db = openConfiguredDatabase(config);
    try {
      await migrate(db, Date.now());
      const cutoff = Date.now() - olderThanMs;
      const dropped = await pruneShards(db, cutoff);
      io.out(`dropped ${dropped.length} shard table${dropped.length === 1 ? '' : 's'} with data older than ${new Date(cutoff).toISOString()}`);
    } finally {
      await db.close();
    }
    return 0;
  },
};
