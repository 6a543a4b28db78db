// `gridkeeper license create --type T --duration D [--grid-kw N] [--solar-kw N] [--battery-kw N] [--ev-kw N]
//  [--count N] [--key K] [--customer UUID]`: creates licenses directly in the database and prints their keys, one per
// line, on stdout (the output is meant for a script or a label printer; nothing is logged). With --customer the new
// licenses go into one new order of that customer, in the same transaction.
import * as v from 'valibot';
import { ConfigError } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { formatIssue } from '../http/validate.ts';
import { CreateLicenseBody, licenseCreated } from './licenses.schemas.ts';
import { plainAuditLog, recordCommandAudit } from '../audit/record.ts';
import { withEvents } from '../events/outbox.ts';
import { createLicenses } from './licenses.service.ts';
import { ApiError } from '../http/errors.ts';
import { uuid } from '../http/validate.ts';
import { createOrder } from './customers.service.ts';

const USAGE = 'license create --type residential|commercial --duration DAYS [--grid-kw N] [--solar-kw N] [--battery-kw N] '
  + '[--ev-kw N] [--count N] [--key K] [--customer UUID]';

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

/** --customer, taken out of the arguments (it is not part of the license body). */
function customerFromArgs(args: string[]): { customer?: string; rest: string[] } {
  const rest: string[] = [];
  let customer: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const eq = args[i].indexOf('=');
    if ((eq > 0 ? args[i].slice(0, eq) : args[i]) !== '--customer') { rest.push(args[i]); continue; }
    if (customer !== undefined) throw new ConfigError('license create: --customer given twice');
    const value = eq > 0 ? args[i].slice(eq + 1) : args[++i];
    const parsed = v.safeParse(uuid, value);
    if (!parsed.success) throw new ConfigError('license create: --customer expects a customer id (uuid)');
    customer = parsed.output;
  }
  return { customer, rest };
}

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
  async run(config, allArgs, io) {
    const { customer, rest: args } = customerFromArgs(allArgs);
    const parsed = v.safeParse(CreateLicenseBody, bodyFromArgs(args), { abortPipeEarly: true });
    if (!parsed.success) {
      const issue = parsed.issues[0];
      // `solarKw: expected ...` -> `--solar-kw: expected ...`
      const message = formatIssue(issue, 'body').replace(/^(\w+)/, (f) => `--${f.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}`);
      const missing = issue.input === undefined && issue.path?.length === 1;
      throw new ConfigError(`license create: ${missing ? `${message.split(':')[0]} is required` : message}`);
    }
    return withMigratedDatabase(config, async (db) => {
      const now = Date.now();
      const created = await db.tx(async (tx) => {
        const licenses = await createLicenses(tx, parsed.output, now);
        if (licenses && customer !== undefined) {
          try {
            await createOrder(tx, customer, licenses.map((l) => l.id), now);
          } catch (err) {
            // the licenses roll back with the order: nothing half-written
            if (err instanceof ApiError && err.status === 404) throw new ConfigError(`license create: no customer with id ${customer}`);
            throw err;
          }
        }
        if (licenses) await recordCommandAudit(tx, now, licenses.map(licenseCreated), withEvents(plainAuditLog));
        return licenses;
      });
      if (!created) throw new ConfigError('license create: a license with this key already exists');
      for (const license of created) io.out(license.key);
      return 0;
    });
  },
};
