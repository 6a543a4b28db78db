// `gridkeeper copy --from <sqlite file | postgres url> --to <postgres url | sqlite file> [--skip-telemetry]`: moves a
// whole installation between the two backends, telemetry included unless --skip-telemetry (see db/copy.ts). Both sides
// are migrated first (forward-only, as a start of the service would), then the target must be empty. A progress line
// per table and shard table; counts verified before the commit.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { checkDatabase } from '../db/configured.ts';
import { loadNativeBinding, nativeDir } from '../db/native.ts';
import { openDatabase, type Db } from '../db/open.ts';
import { openPostgres } from '../db/postgres.ts';
import { migrate } from '../db/migrate.ts';
import { copyInstallation, CopyError } from '../db/copy.ts';
import { telemetryCopy } from '../telemetry/telemetry-copy.store.ts';

const USAGE = 'copy --from <sqlite file | postgres://...> --to <postgres://... | sqlite file> [--skip-telemetry]';

const isPostgres = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** Where a location points, for messages: never a URL's password. */
function describe(location: string): string {
  if (!isPostgres(location)) return resolve(location);
  const url = new URL(location);
  url.password = '';
  return url.toString();
}

export const copyCommand: Command = {
  words: ['copy'],
  usage: USAGE,
  async run(config, args, io) {
    const skipTelemetry = args.includes('--skip-telemetry');
    const { values } = parseFlags('copy', USAGE, args.filter((a) => a !== '--skip-telemetry'), ['from', 'to']);
    if (!values.from || !values.to) throw new ConfigError(`copy: --from and --to are required (usage: gridkeeper ${USAGE})`);
    if (describe(values.from) === describe(values.to)) throw new ConfigError('copy: --from and --to name the same database');
    if (!isPostgres(values.from) && !existsSync(values.from)) throw new ConfigError(`copy: --from: no such file ${resolve(values.from)}`);
    const nativeBinding = () => loadNativeBinding(nativeDir(config));
    const open = async (location: string, flag: string): Promise<Db> => {
      if (isPostgres(location)) {
        const db = openPostgres({ url: location });
        try {
          await checkDatabase(db, `copy: ${flag}`);
        } catch (err) {
          await db.close();
          throw err;
        }
        return db;
      }
      mkdirSync(dirname(resolve(location)), { recursive: true });
      return openDatabase({ file: resolve(location), nativeBinding: nativeBinding() });
    };
    const source = await open(values.from, '--from');
    let target: Db | undefined;
    try {
      target = await open(values.to, '--to');
      await migrate(source, Date.now());
      await migrate(target, Date.now());
      io.err(`copy: ${describe(values.from)} -> ${describe(values.to)}`);
      const report = await copyInstallation(source, target, { skipTelemetry, telemetry: telemetryCopy, progress: (line) => io.err(line) });
      const rows = report.tables.reduce((n, t) => n + t.rows, 0);
      const points = report.shards.reduce((n, t) => n + t.points, 0);
      const telemetry = report.telemetrySkipped ? '; row counts verified (telemetry not copied: --skip-telemetry)'
        : ` and ${points} telemetry points in ${report.shards.length} shard tables; row and point counts verified`;
      io.out(`copied ${rows} rows in ${report.tables.length} tables${telemetry}`);
      return 0;
    } catch (err) {
      if (err instanceof CopyError) throw new ConfigError(`copy: ${err.message}`);
      throw err;
    } finally {
      await source.close();
      await target?.close();
    }
  },
};
