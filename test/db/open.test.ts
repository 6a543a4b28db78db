// The database layer: transactions (nesting, rollback, no async), the synchronous executor, pragmas, migrations.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/open.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';

function freshDb() {
  const db = openDatabase({ file: ':memory:' });
  db.sqlite.exec('CREATE TABLE t (v INTEGER)');
  return db;
}
const values = (db: ReturnType<typeof freshDb>) => db.sqlite.prepare('SELECT v FROM t ORDER BY v').pluck().all();

describe('transactions', () => {
  test('commit on return, roll back on throw, rethrowing the error', () => {
    const db = freshDb();
    assert.equal(db.tx(() => { db.sqlite.exec('INSERT INTO t VALUES (1)'); return 'ok'; }), 'ok');
    assert.throws(() => db.tx(() => { db.sqlite.exec('INSERT INTO t VALUES (2)'); throw new Error('boom'); }), /boom/);
    assert.deepEqual(values(db), [1]);
    assert.equal(db.sqlite.inTransaction, false);
  });

  test('a nested call is a savepoint: its failure undoes only itself', () => {
    const db = freshDb();
    db.tx(() => {
      db.sqlite.exec('INSERT INTO t VALUES (1)');
      assert.throws(() => db.tx(() => { db.sqlite.exec('INSERT INTO t VALUES (2)'); throw new Error('inner'); }));
      db.tx(() => db.tx(() => db.sqlite.exec('INSERT INTO t VALUES (3)')));
    });
    assert.deepEqual(values(db), [1, 3]);
  });

  test('an outer failure undoes the inner savepoints too', () => {
    const db = freshDb();
    assert.throws(() => db.tx(() => {
      db.tx(() => db.sqlite.exec('INSERT INTO t VALUES (1)'));
      throw new Error('outer');
    }));
    assert.deepEqual(values(db), []);
    assert.equal(db.sqlite.inTransaction, false);
  });

  test('an async function is refused and nothing it did before its first await is kept', () => {
    const db = freshDb();
    assert.throws(() => db.tx((async () => { db.sqlite.exec('INSERT INTO t VALUES (1)'); }) as () => unknown), /synchronous/);
    assert.deepEqual(values(db), []);
    assert.equal(db.sqlite.inTransaction, false);
  });

  test('a constraint failure inside a transaction leaves the database usable', () => {
    const db = freshDb();
    db.sqlite.exec('CREATE UNIQUE INDEX tu ON t (v)');
    db.tx(() => db.sqlite.exec('INSERT INTO t VALUES (1)'));
    assert.throws(() => db.tx(() => db.sqlite.exec('INSERT INTO t VALUES (1)')), /UNIQUE/);
    db.tx(() => db.sqlite.exec('INSERT INTO t VALUES (2)'));
    assert.deepEqual(values(db), [1, 2]);
  });
});

describe('executor and schema', () => {
  test('Kysely-built queries run synchronously with booleans bound as 0/1', () => {
    const db = openDatabase({ file: ':memory:' });
    migrate(db, 0);
    const inserted = db.get(db.qb.insertInto('users').values({ email: 'A@b', password_hash: 'x', password_changed_at: 1, created_at: 1 }).returning('id'));
    assert.deepEqual(inserted, { id: 1 });
    // the email column is case-insensitive
    assert.deepEqual(db.all(db.qb.selectFrom('users').select(['id', 'email']).where('email', '=', 'a@B')), [{ id: 1, email: 'A@b' }]);
    const r = db.run(db.qb.updateTable('users').set({ tier: 'premium' }).where('id', '=', 1));
    assert.equal(r.changes, 1);
    assert.equal(db.sqlite.prepare('SELECT ?').pluck().get(...[true].map((b) => (b ? 1 : 0))), 1);
  });

  test('file databases use WAL, synchronous FULL and foreign keys; migrations are recorded and idempotent', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-db-'));
    try {
      const db = openDatabase({ file: join(dir, 'x.db') });
      t.after(() => db.close());
      assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 2); // FULL
      assert.equal(db.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.deepEqual(migrate(db, 0), migrations.map((m) => m.name));
      assert.deepEqual(migrate(db, 0), []);
      db.sqlite.prepare("INSERT INTO schema_migrations VALUES ('9999_future', 0)").run();
      assert.throws(() => migrate(db, 0), /newer gridkeeper.*9999_future/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a failing migration leaves nothing half-applied', () => {
    const db = openDatabase({ file: ':memory:' });
    const broken = [{ name: '0001_ok', sql: 'CREATE TABLE a (x)' }, { name: '0002_bad', sql: 'CREATE TABLE b (x); INSERT INTO nowhere VALUES (1);' }];
    assert.throws(() => migrate(db, 0, broken), /nowhere/);
    const tables = db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    assert.deepEqual(tables, ['a', 'schema_migrations']);
    assert.deepEqual(db.sqlite.prepare('SELECT name FROM schema_migrations').pluck().all(), ['0001_ok']);
  });
});
