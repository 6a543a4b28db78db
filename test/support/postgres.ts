// Test databases on the PostgreSQL server at GRIDKEEPER_TEST_DATABASE_URL (default: the machine's server, trust auth).
// The suite runs once per backend (test/run.mjs); with GRIDKEEPER_TEST_BACKEND=postgres every test app gets a database
// of its own, created from a template that holds the migrated schema (a copy is much cheaper than migrating again),
// and dropped when the app closes. An unreachable server fails the run with a message saying how to start it: the
// PostgreSQL half is never skipped silently.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { openPostgres } from '../../src/db/postgres.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/open.ts';

export const TEST_SERVER_URL = process.env.GRIDKEEPER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function testBackend(): 'sqlite' | 'postgres' {
  return process.env.GRIDKEEPER_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
}

/** The URL of database `name` on the test server. */
export function databaseUrl(name: string): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

const HOW_TO_START = 'PostgreSQL 15 must be reachable at GRIDKEEPER_TEST_DATABASE_URL '
  + `(${TEST_SERVER_URL}); on the project's machines start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start`;

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`${HOW_TO_START} (${(err as Error).message})`);
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The template's name changes with the migrations' text, so a changed schema never meets an old template. */
const TEMPLATE = `gk_template_${createHash('sha256').update(migrations.map((m) => `${m.name}\n${m.pg}`).join('\n')).digest('hex').slice(0, 12)}`;
let template: Promise<void> | undefined;

function ensureTemplate(): Promise<void> {
  template ??= admin(async (client) => {
    // one test process creates it; the others wait for the lock and find it done
    await client.query('SELECT pg_advisory_lock(7262)');
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE]);
      if (exists.rowCount === 0) {
        const building = `${TEMPLATE}_building_${process.pid}`;
        await client.query(`DROP DATABASE IF EXISTS ${building}`);
        await client.query(`CREATE DATABASE ${building}`);
        const db = openPostgres({ url: databaseUrl(building), poolSize: 1 });
        try {
          await migrate(db, 0);
        } finally {
          await db.close();
        }
        await client.query(`ALTER DATABASE ${building} RENAME TO ${TEMPLATE}`);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(7262)');
    }
  });
  return template;
}

let counter = 0;
/**
 * Every database a test makes is named `gk_test_<run>_…`: test/run.mjs gives each run an id (GRIDKEEPER_TEST_RUN) and
 * drops the run's databases when its PostgreSQL pass ends, also those of a test that never closed its app.
 */
export const RUN_PREFIX = `gk_test_${(process.env.GRIDKEEPER_TEST_RUN ?? 'adhoc').replace(/[^a-z0-9]/g, '')}_`;
const newName = (kind: string) => `${RUN_PREFIX}${kind}${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** A fresh, migrated database of its own; `drop` closes the handle and removes the database. */
export async function freshPostgres(): Promise<{ db: Db; name: string; drop(): Promise<void> }> {
  await ensureTemplate();
  const name = newName('a');
  await admin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`));
  const db = openPostgres({ url: databaseUrl(name), poolSize: 4 });
  let dropped = false;
  return {
    db,
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await db.close();
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * A fresh EMPTY database on the test server (no schema: whoever connects first migrates it, e.g. the executable with
 * GRIDKEEPER_DATABASE_URL) and its URL; `drop` removes it, also while something is still connected to it.
 */
export async function emptyPostgres(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = newName('e');
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  let dropped = false;
  return {
    name,
    url: databaseUrl(name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
