// First start: root role, admin user, signing key — and a generated password is shown before it is committed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { verifySecret } from '../../src/auth/passwords.ts';

test('bootstrap creates root role 1 with all self rights, the admin as its member, and a signing key', async (t) => {
  const db = openDatabase({ file: ':memory:' });
  t.after(() => db.close());
  await migrate(db, 0);
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
  const db = openDatabase({ file: ':memory:' });
  t.after(() => db.close());
  await migrate(db, 0);
  const seen: { password: string; usersAtAnnouncement: number }[] = [];
  const result = await bootstrap(db, {
    adminEmail: 'admin@localhost', now: 1,
    announcePassword: (_email, password) => {
      // a synchronous callback, called while no transaction is open: the connection is read directly
      seen.push({ password, usersAtAnnouncement: db.sqlite.prepare('SELECT count(*) FROM users').pluck().get() as number });
    },
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].usersAtAnnouncement, 0, 'shown while nothing is stored yet');
  assert.equal(seen[0].password, result.generatedPassword);
  assert.match(seen[0].password, /^\S{20}$/);
  const hash = (await db.get(sql<{ password_hash: string }>`SELECT password_hash FROM users`))!.password_hash;
  assert.ok(await verifySecret(seen[0].password, hash));
});
