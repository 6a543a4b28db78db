// First start: root role, admin user, signing key — and a generated password is shown before it is committed. On the
// backend under test: an in-memory SQLite database, or a fresh migrated PostgreSQL database (test/run.mjs runs this
// file once per backend).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type Database from 'better-sqlite3';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { bootstrap } from '../../src/boot/bootstrap.ts';
import { verifySecret } from '../../src/auth/passwords.ts';
import { freshPostgres, testBackend } from '../support/postgres.ts';

/** A migrated, empty database of the backend under test, removed after the test; on SQLite also its connection. */
async function migratedDb(t: { after(fn: () => unknown): void }): Promise<{ db: Db; sqlite?: Database.Database }> {
  if (testBackend() === 'postgres') {
    const pg = await freshPostgres();
    t.after(() => pg.drop());
    return { db: pg.db };
  }
  const db = openDatabase({ file: ':memory:' });
  t.after(() => db.close());
  await migrate(db, 0);
  return { db, sqlite: db.sqlite };
}

test('bootstrap creates root role 1 with all self rights, the admin as its member, and a signing key', async (t) => {
  const { db } = await migratedDb(t);
  const result = await bootstrap(db, { adminEmail: 'ops@site', adminPassword: 'given-password-1', now: 5 });
  assert.deepEqual(result, { created: true, adminEmail: 'ops@site' });
  assert.deepEqual(await db.all(sql`SELECT id, name, self_role_management + self_user_management + self_view_management + self_device_management + self_report_management + self_alarm_management AS flags FROM roles`),
    [{ id: 1, name: 'root', flags: 6 }]);
  const admin = (await db.get(sql<{ id: number; password_hash: string }>`SELECT id, password_hash FROM users WHERE email = ${'ops@site'}`))!;
  assert.ok(await verifySecret('given-password-1', admin.password_hash));
  assert.deepEqual(await db.all(sql`SELECT role_id, user_id FROM members`), [{ role_id: 1, user_id: admin.id }]);
  assert.equal((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM signing_keys WHERE retired_at IS NULL`))?.n, 1);
  // a second start changes nothing
  assert.deepEqual(await bootstrap(db, { adminEmail: 'ops@site', now: 6 }), { created: false, adminEmail: 'ops@site' });
  assert.equal((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM users`))?.n, 1);
});

test('a generated admin password is announced before the admin is committed, never after', async (t) => {
  const { db, sqlite } = await migratedDb(t);
  const counts = async () => db.get(sql`SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM roles) AS roles, (SELECT count(*) FROM members) AS members`);
  // The process dies while the password is shown (the callback throws): nothing of the admin was stored yet...
  const lost: string[] = [];
  await assert.rejects(bootstrap(db, {
    adminEmail: 'admin@localhost', now: 1,
    announcePassword: (_email, password) => { lost.push(password); throw new Error('died while showing the password'); },
  }), /died while showing the password/);
  assert.equal(lost.length, 1);
  assert.deepEqual(await counts(), { users: 0, roles: 0, members: 0 }, 'a password that was not shown to the end is not stored');
  // ...so the next start generates and shows a new one, and stores that one
  const seen: string[] = [];
  const result = await bootstrap(db, {
    adminEmail: 'admin@localhost', now: 2,
    announcePassword: (_email, password) => {
      seen.push(password);
      // SQLite: a synchronous callback inside the bootstrap's transaction, read on its connection: not even the
      // transaction holds the admin yet (and nothing is committed before it ends)
      if (sqlite) assert.equal(sqlite.prepare('SELECT count(*) FROM users').pluck().get(), 0, 'shown while nothing is stored yet');
    },
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0], result.generatedPassword);
  assert.match(seen[0], /^\S{20}$/);
  assert.notEqual(seen[0], lost[0]);
  assert.deepEqual(await counts(), { users: 1, roles: 1, members: 1 });
  const hash = (await db.get(sql<{ password_hash: string }>`SELECT password_hash FROM users`))!.password_hash;
  assert.ok(await verifySecret(seen[0], hash));
  assert.equal(await verifySecret(lost[0], hash), false);
});
