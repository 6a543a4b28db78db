// The service with a chosen `synchronous` pragma (bench/hardening.mjs) and with or without its audit writes
// (bench/audit.mjs), for benchmarks only: the appliance itself always runs with FULL (src/db/open.ts) and always audits.
// Settings from the usual environment; BENCH_SYNC = FULL | NORMAL | OFF, BENCH_AUDIT = on | off.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../src/lib/config.ts';
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/boot/runtime.ts';
import { startServer } from '../src/boot/server.ts';
import { noAuditLog } from '../src/audit/record.ts';

const mode = process.env.BENCH_SYNC ?? 'FULL';
if (!['FULL', 'NORMAL', 'OFF'].includes(mode)) throw new Error(`BENCH_SYNC must be FULL, NORMAL or OFF, got ${mode}`);
const audit = process.env.BENCH_AUDIT ?? 'on';
if (!['on', 'off'].includes(audit)) throw new Error(`BENCH_AUDIT must be on or off, got ${audit}`);
const { config } = parseConfig(process.env, []);
mkdirSync(config.dataDir, { recursive: true });
const db = openDatabase({ file: join(config.dataDir, 'gridkeeper.db') });
db.sqlite.pragma(`synchronous = ${mode}`);
const { deps } = await createDeps({ config, db });
// read back after migrations and bootstrap, before the server starts: the mode the measured requests run under
const inEffect = ['OFF', 'NORMAL', 'FULL'][Number(db.sqlite.pragma('synchronous', { simple: true }))];
if (inEffect !== mode) throw new Error(`synchronous is ${inEffect}, not the requested ${mode}`);
if (audit === 'off') deps.audit = noAuditLog;
const running = await startServer(deps, (url) => console.log(JSON.stringify({ msg: 'listening', url, synchronous: mode, audit })));
process.once('SIGTERM', () => { void running.stop().then(() => process.exit(0)); });
