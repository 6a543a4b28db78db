// The service with a chosen `synchronous` pragma, for bench/hardening.mjs only: the appliance itself always runs with
// FULL (src/db/open.ts). Settings from the usual environment; BENCH_SYNC = FULL | NORMAL | OFF.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/runtime.ts';
import { startServer } from '../src/server.ts';

const mode = process.env.BENCH_SYNC ?? 'FULL';
if (!['FULL', 'NORMAL', 'OFF'].includes(mode)) throw new Error(`BENCH_SYNC must be FULL, NORMAL or OFF, got ${mode}`);
const { config } = parseConfig(process.env, []);
mkdirSync(config.dataDir, { recursive: true });
const db = openDatabase({ file: join(config.dataDir, 'gridkeeper.db') });
db.sqlite.pragma(`synchronous = ${mode}`);
const { deps } = await createDeps({ config, db });
const running = await startServer(deps, (url) => console.log(JSON.stringify({ msg: 'listening', url, synchronous: mode })));
process.once('SIGTERM', () => { void running.stop().then(() => process.exit(0)); });
