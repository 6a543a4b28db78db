// `gridkeeper audit export [--from ISO] [--to ISO]`: the audit entries with from <= time < to (default: all of them up to
// now), oldest first, as JSON lines on stdout — one entry per line, in the shape of POST /v1/audit/query — for a SIEM.
// Read-only, and safe while the service runs (the export reads one consistent snapshot, in pages, without holding up
// the service's writes).
import * as v from 'valibot';
import { sql } from 'kysely';
import { ConfigError } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { IsoTime, toAuditEntry } from './audit.schemas.ts';
import { iterateAuditEntries } from './audit.store.ts';

const USAGE = 'audit export [--from ISO] [--to ISO]';

function time(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const parsed = v.safeParse(IsoTime, text);
  if (!parsed.success) throw new ConfigError(`audit export: --${flag}: ${parsed.issues[0].message} (got ${JSON.stringify(text)})`);
  return parsed.output;
}

export const exportAuditCommand: Command = {
  words: ['audit', 'export'],
  usage: USAGE,
  async run(config, args, io) {
    const { values } = parseFlags('audit export', USAGE, args, ['from', 'to']);
    const from = time('from', values.from) ?? 0;
    const to = time('to', values.to) ?? Date.now() + 1;
    if (from >= to) throw new ConfigError('audit export: --from must be before --to');
    // one read-only snapshot (Db.read), read in pages: entries committed or pruned meanwhile do not tear the export,
    // and the service's writes never wait for it
    await withMigratedDatabase(config, (db) => db.read(async (snapshot) => {
      for await (const row of iterateAuditEntries(snapshot, from, to)) io.out(JSON.stringify(toAuditEntry(row)));
    }));
    return 0;
  },
};
