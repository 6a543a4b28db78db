// Issue 18: what a statement costs on PostgreSQL sent unnamed (parsed, analysed and rewritten by the server on every
// call) and as a named prepared statement (parsed once per connection: src/db/prepared.ts), on one connection,
// rounds alternating. The statements are the shapes of gridkeeper's hot ones on a migrated database: the session
// lookup of every authenticated request, a rights check reading the rights version, the telemetry catalogue.
// Run: node bench/pg-statements.mjs   (env ROUNDS, CALLS; GRIDKEEPER_TEST_DATABASE_URL for another server)
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { benchDatabase } from './lib/postgres.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CALLS = Number(process.env.CALLS ?? 2000);
const root = fileURLToPath(new URL('..', import.meta.url));

const STATEMENTS = [
  ['session lookup', `SELECT s.user_id, s.revoked_at, u.token_generation, u.tier FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.sid = $1`, ['no-such-session']],
  ['rights check', `SELECT id, node_id, (SELECT version FROM rights_version) AS rights_version FROM devices WHERE node_id = $1`, ['node-042']],
  ['telemetry catalogue', `SELECT n.id, n.key, n.namespace, n.created_at,
      (SELECT json_agg(json_build_object('namespace_id', f.namespace_id, 'measurement', f.measurement, 'field', f.field, 'ordinal', f.ordinal, 'type', f.type)
        ORDER BY f.measurement, f.ordinal) FROM telemetry_fields f WHERE f.namespace_id = n.id) AS fields,
      (SELECT json_agg(json_build_object('namespace_id', s.namespace_id, 'shard_window', s.shard_window, 'table_name', s.table_name,
        'start_ms', s.start_ms, 'end_ms', s.end_ms, 'columns', s.columns)) FROM telemetry_shards s WHERE s.namespace_id = n.id) AS shards
    FROM telemetry_namespaces n WHERE n.key = ANY($1)`, [['v1/energy/autogen']]],
];

const db = await benchDatabase('gk_bench_statements');
const client = new pg.Client({ connectionString: db.url });
await client.connect();
try {
  // the schema as gridkeeper migrates it (sql/pg)
  const dir = join(root, 'sql', 'pg');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql')).sort()) await client.query(readFileSync(join(dir, file), 'utf8'));
  const per = { unnamed: [], named: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of r % 2 ? ['named', 'unnamed'] : ['unnamed', 'named']) {
      const t0 = performance.now();
      for (let i = 0; i < CALLS; i++) {
        for (const [k, [, text, values]] of STATEMENTS.entries()) {
          await client.query(kind === 'named' ? { name: `bench_${k}`, text, values } : { text, values });
        }
      }
      per[kind].push(((performance.now() - t0) * 1000) / (CALLS * STATEMENTS.length));
    }
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`PostgreSQL statements, one connection, ${STATEMENTS.map((s) => s[0]).join(' / ')} in turn, ${ROUNDS} rounds of ${CALLS}:`);
  console.log(`  unnamed  ${median(per.unnamed).toFixed(0)} µs per statement (rounds ${per.unnamed.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  named    ${median(per.named).toFixed(0)} µs per statement (rounds ${per.named.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  ratio named / unnamed ${(median(per.named) / median(per.unnamed)).toFixed(2)}`);
} finally {
  await client.end();
  await db.drop();
}
