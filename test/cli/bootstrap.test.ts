// First start: root role, admin user, signing key — and a generated password is shown before it is committed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { verifySecret } from '../../src/auth/passwords.ts';

test('bootstrap creates root role 1 with all self rights, the admin as its member, and a signing key', async (t) => {
  const db = openDatabase({ file: ':memory:' });
  t.after(() => db.close());
  migrate(db, 0);
  const result = await bootstrap(db, { adminEmail: 'ops@site', adminPassword: 'given-password-1', now: 5 });
  assert.deepEqual(result, { created: true, adminEmail: 'ops@site' });
  assert.deepEqual(db.sqlite.prepare('SELECT id, name, self_role_management + self_user_management + self_view_management + self_device_management + self_report_management + self_alarm_management AS flags FROM roles').all(),
    [{ id: 1, name: 'root', flags: 6 }]);
  const admin = db.sqlite.prepare('SELECT id, password_hash FROM users WHERE email = ?').get('ops@site') as { id: number; password_hash: string };
  assert.ok(await verifySecret('given-password-1', admin.password_hash));
  assert.deepEqual(db.sqlite.prepare('SELECT role_id, user_id FROM members').all(), [{ role_id: 1, user_id: admin.id }]);
  assert.equal(db.sqlite.prepare('SELECT count(*) FROM signing_keys WHERE retired_at IS NULL').pluck().get(), 1);
  // a second start changes nothing
  assert.deepEqual(await bootstrap(db, { adminEmail: 'ops@site', now: 6 }), { created: false, adminEmail: 'ops@site' });
  assert.equal(db.sqlite.prepare('SELECT count(*) FROM users').pluck().get(), 1);
});

test('a generated admin password is announced before the admin is committed, never after', async (t) => {
  const db = openDatabase({ file: ':memory:' });
  t.after(() => db.close());
  migrate(db, 0);
  const seen: { password: string; usersAtAnnouncement: number }[] = [];
  const result = await bootstrap(db, {
    adminEmail: 'admin@localhost', now: 1,
    announcePassword: (_email, password) => {
      seen.push({ password, usersAtAnnouncement: db.sqlite.prepare('SELECT count(*) FROM users').pluck().get() as number });
    },
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].usersAtAnnouncement, 0, 'shown while nothing is stored yet');
  assert.equal(seen[0].password, result.generatedPassword);
  assert.match(seen[0].password, /^\S{20}$/);
  const hash = db.sqlite.prepare('SELECT password_hash FROM users').pluck().get() as string;
  assert.ok(await verifySecret(seen[0].password, hash));
});
