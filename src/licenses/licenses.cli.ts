// `gridkeeper license create --type T --duration D [--grid-kw N] [--solar-kw N] [--battery-kw N] [--ev-kw N]
//  [--count N] [--key K]`: creates licenses directly in the database and prints their keys, one per line, on stdout
// (the output is meant for a script or a label printer; nothing is logged).
import * as v from 'valibot';
import { ConfigError } from '../config.ts';
import { parseFlags, type Command } from '../command.ts';
import { openConfiguredDatabase } from '../runtime.ts';
import { migrate } from '../db/migrate.ts';
import { formatIssue } from '../http/validate.ts';
import { CreateLicenseBody, licenseCreated } from './licenses.schemas.ts';
import { recordCommandAudit } from '../audit/record.ts';
import { createLicenses } from './licenses.service.ts';

const USAGE = 'license create --type residential|commercial --duration DAYS [--grid-kw N] [--solar-kw N] [--battery-kw N] '
  + '[--ev-kw N] [--count N] [--key K]';

/** flag -> body field, and whether its value is a number */
const FLAGS = {
  type: ['type', false],
  duration: ['duration', true],
  'grid-kw': ['gridKw', true],
  'solar-kw': ['solarKw', true],
  'battery-kw': ['batteryKw', true],
  'ev-kw': ['evKw', true],
  count: ['count', true],
  key: ['key', false],
} as const satisfies Record<string, readonly [field: string, numeric: boolean]>;

/** The flags as a request body, so the CLI and POST /v1/license share one schema and one set of rules. */
function bodyFromArgs(args: string[]): Record<string, unknown> {
  const { values } = parseFlags('license create', USAGE, args, Object.keys(FLAGS) as (keyof typeof FLAGS)[]);
  const body: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(values) as [keyof typeof FLAGS, string][]) {
    const [field, numeric] = FLAGS[flag];
    body[field] = numeric && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return body;
}

export const createLicenseCommand: Command = {
  words: ['license', 'create'],
  usage: USAGE,
  async run(config, args, io) {
    const parsed = v.safeParse(CreateLicenseBody, bodyFromArgs(args), { abortPipeEarly: true });
    if (!parsed.success) {
      const issue = parsed.issues[0];
      // `solarKw: expected ...` -> `--solar-kw: expected ...`
      const message = formatIssue(issue, 'body').replace(/^(\w+)/, (f) => `--${f.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}`);
      const missing = issue.input === undefined && issue.path?.length === 1;
      throw new ConfigError(`license create: ${missing ? `${message.split(':')[0]} is required` : message}`);
    }
    const db = openConfiguredDatabase(config);
    try {
      migrate(db, Date.now());
      const now = Date.now();
      const created = db.tx(() => {
        const rows = createLicenses(db, parsed.output, now);
        if (rows) recordCommandAudit(db, now, rows.map(licenseCreated));
        return rows;
      });
      if (!created) throw new ConfigError('license create: a license with this key already exists');
      for (const license of created) io.out(license.key);
      return 0;
    } finally {
      db.close();
    }
  },
};
