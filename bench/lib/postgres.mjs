// A fresh database for a benchmark on the PostgreSQL server at GRIDKEEPER_TEST_DATABASE_URL (default: this machine's
// server, postgres://postgres@127.0.0.1:5432/postgres); drop() removes it, close() keeps it.
import pg from 'pg';

export async function benchDatabase(name) {
  const server = process.env.GRIDKEEPER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
    async close() {
      await admin.end();
    },
  };
}
