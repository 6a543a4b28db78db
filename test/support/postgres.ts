// Test databases on the PostgreSQL server at GRIDKEEPER_TEST_DATABASE_URL (default: the machine's server, trust auth).
// The suite runs once per backend (test/run.mjs); with GRIDKEEPER_TEST_BACKEND=postgres every test app gets a database
// of its own, created from a template that holds the migrated schema (a copy is much cheaper than migrating again),
// and emptied for the next one when the app closes (freshPostgres). An unreachable server fails the run with a message
// saying how to start it: the PostgreSQL half is never skipped silently.
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
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

async function connectAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`${HOW_TO_START} (${(err as Error).message})`);
  }
  return client;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectAdmin();
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

/**
 * A fresh, migrated database of its own; `drop` closes the handle and gives the database back. The databases given
 * back go to the run's next caller, in this test process or another (the run's pool): a caller takes one that no
 * other process holds (an advisory lock of its own, on a connection this process keeps to the server), empties it
 * back to the template's state, and only makes a new one from the template when every database of the pool is held.
 * Making one took 0.25 s on a quiet server and 0.9 s during the suite (the template's 9 MB go through the WAL), and
 * dropping one makes the server write a checkpoint; emptying one takes ~0.03 s. A database that cannot be proven
 * equal to the template (its last holder died half-way, or the template changed since) is dropped and made again.
 * test/run.mjs drops the pool when its run ends; a run without GRIDKEEPER_TEST_RUN (a file run by hand) leaves its
 * `gk_test_adhoc_` pool on the server for the next such run.
 */
export async function freshPostgres(): Promise<{ db: Db; name: string; drop(): Promise<void> }> {
  await ensureTemplate();
  const { name, slot } = await claim();
  const db = openPostgres({ url: databaseUrl(name), poolSize: 4 });
  let dropped = false;
  return {
    db,
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await db.close();
      await release(slot);
    },
  };
}

/** The advisory lock keys of the run's pool: (POOL_KEY, slot) for database `${RUN_PREFIX}p${slot}`. */
const POOL_KEY = createHash('sha256').update(RUN_PREFIX).digest().readInt32BE(0);
/** The slots this process holds (a session's advisory locks are re-entrant: it would take its own again). */
const held = new Set<number>();
let locker: Promise<pg.Client> | undefined;

/** uses of the locker's connection under way: while any is, its socket holds the process */
let lockerUses = 0;

/**
 * Runs fn with this process's connection for the pool's locks. The connection does not hold the process between
 * uses (its end releases the locks: the pool's databases outlive the process that held them).
 */
async function withLocker<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  locker ??= connectAdmin().then((client) => {
    client.on('error', () => { locker = undefined; held.clear(); });
    return client;
  });
  const client = await locker;
  if (lockerUses++ === 0) socketOf(client).ref();
  try {
    return await fn(client);
  } finally {
    if (--lockerUses === 0) socketOf(client).unref();
  }
}

function claim(): Promise<{ name: string; slot: number }> {
  return withLocker(async (client) => {
    for (let slot = 0; ; slot++) {
      // taken before the server answers, so that a claim of this process running meanwhile passes it by
      if (held.has(slot)) continue;
      held.add(slot);
      const { rows: [{ got }] } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [POOL_KEY, slot]);
      if (!got) {
        held.delete(slot);
        continue;
      }
      const name = `${RUN_PREFIX}p${slot}`;
      try {
        const exists = (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount !== 0;
        if (exists && await emptied(name)) return { name, slot };
        await forgetKeeper(name);
        if (exists) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
        return { name, slot };
      } catch (err) {
        await release(slot);
        throw err;
      }
    }
  });
}

async function release(slot: number): Promise<void> {
  if (!held.delete(slot)) return;
  await withLocker((client) => client.query('SELECT pg_advisory_unlock($1, $2)', [POOL_KEY, slot]));
}

/** What a database made from the template holds: its relations, the rows of its tables that have any, its shape. */
interface TemplateState {
  relations: string[];
  tables: string[];
  rows: Array<{ table: string; json: string }>;
  shape: string;
}
let templateState: Promise<TemplateState> | undefined;

// Everything about the public schema a test could change and an emptied database must have as the template has it:
// columns, indexes, constraints, triggers, functions, and every sequence's state.
const SHAPE_SQL = `SELECT md5(concat_ws('|',
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT format('%s.%s:%s:%s:%s:%s', c.relname, a.attnum, a.attname, a.atttypid, a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS x
     FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'public'::regnamespace) _),
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT pg_get_indexdef(i.indexrelid) AS x FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = 'public'::regnamespace) _),
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT format('%s:%s', conname, pg_get_constraintdef(oid)) AS x FROM pg_constraint
     WHERE connamespace = 'public'::regnamespace) _),
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT pg_get_triggerdef(t.oid) AS x FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal) _),
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT CASE WHEN p.prokind IN ('f', 'p') THEN md5(pg_get_functiondef(p.oid)) ELSE p.oid::regprocedure::text END AS x
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace) _),
  (SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT format('%s.%s:%s', schemaname, sequencename, coalesce(last_value::text, '-')) AS x FROM pg_sequences) _),
  (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%')
)) AS shape`;

async function withDatabase<T>(name: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(name), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function readTemplateState(): Promise<TemplateState> {
  templateState ??= withDatabase(TEMPLATE, async (client) => {
    const relations = (await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1`)).rows.map((r) => r.name);
    const tables = (await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') ORDER BY 1`)).rows.map((r) => r.name);
    const rows: TemplateState['rows'] = [];
    for (const table of tables) {
      const { rows: [r] } = await client.query<{ json: string | null }>(`SELECT json_agg(t)::text AS json FROM "${table}" t`);
      if (r.json !== null) rows.push({ table, json: r.json });
    }
    const shape = (await client.query<{ shape: string }>(SHAPE_SQL)).rows[0].shape;
    return { relations, tables, rows, shape };
  });
  return templateState;
}

/** The socket under a pg client (not in its types), to let a kept connection not hold the process. */
const socketOf = (client: pg.Client): Socket => (client as unknown as { connection: { stream: Socket } }).connection.stream;

/** A connection to each database this process empties, kept while the database is: connecting costs ~30 ms. */
const keepers = new Map<string, pg.Client>();

async function keeper(name: string): Promise<pg.Client> {
  let client = keepers.get(name);
  if (client === undefined) {
    client = new pg.Client({ connectionString: databaseUrl(name), connectionTimeoutMillis: 5000 });
    client.on('error', () => keepers.delete(name));
    await client.connect();
    socketOf(client).unref();
    keepers.set(name, client);
  }
  return client;
}

/**
 * Empties database `name` back to the template's state: whatever else is still connected is disconnected, relations
 * the template lacks (a telemetry store's shard tables) are dropped, every table's rows are deleted (with triggers and
 * foreign keys off for the transaction: order does not matter, and nothing is recorded in rights_version), the
 * template's own rows are put back and every sequence starts again. TRUNCATE would be the obvious tool, but it makes
 * new files for all ~120 relations: 130-150 ms, where deleting the few rows a test leaves costs ~20 ms. True only when
 * the result has the template's shape and rows; otherwise (or on any error) false, and the caller drops the database.
 */
async function emptied(name: string): Promise<boolean> {
  try {
    const state = await readTemplateState();
    const client = await keeper(name);
    const socket = socketOf(client);
    // the kept connection holds the process only while it works
    socket.ref();
    try {
      return await reset(client, state);
    } finally {
      socket.unref();
    }
  } catch {
    await forgetKeeper(name);
    return false;
  }
}

async function reset(client: pg.Client, state: TemplateState): Promise<boolean> {
  await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL session_replication_role = replica');
    const extra = (await client.query<{ name: string; kind: string }>(
      `SELECT relname AS name, relkind AS kind FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
         AND NOT (relname = ANY($1))`, [state.relations])).rows;
    for (const r of extra) {
      const what = { r: 'TABLE', p: 'TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE', f: 'FOREIGN TABLE' }[r.kind];
      await client.query(`DROP ${what} IF EXISTS "${r.name}" CASCADE`);
    }
    // one round trip: simple statements, no parameters
    await client.query(state.tables.map((t) => `DELETE FROM "${t}";`).join('\n'));
    for (const { table, json } of state.rows) {
      await client.query(`INSERT INTO "${table}" OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::"${table}", $1::json)`, [json]);
    }
    await client.query(`SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
      WHERE c.relnamespace = 'public'::regnamespace`);
    const shape = (await client.query<{ shape: string }>(SHAPE_SQL)).rows[0].shape;
    if (shape !== state.shape) throw new Error('not the template\'s shape');
    // and the template's rows, no more and no fewer
    const contents = state.tables.map((t) => `(SELECT coalesce(json_agg(t)::text, '') FROM "${t}" t)`).join(', ');
    const now = (await client.query({ text: `SELECT ${contents}`, rowMode: 'array' })).rows[0] as string[];
    state.tables.forEach((table, i) => {
      if (now[i] !== (state.rows.find((r) => r.table === table)?.json ?? '')) throw new Error(`${table} is not as in the template`);
    });
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

async function forgetKeeper(name: string): Promise<void> {
  const client = keepers.get(name);
  keepers.delete(name);
  if (client === undefined) return;
  // its socket holds the process again until it is closed
  socketOf(client).ref();
  await client.end().catch(() => {});
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
