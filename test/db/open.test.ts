// The database layer: transactions (handles, nesting, rollback), the connection gate, pragmas, migrations.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';

function freshDb(checkHandles = true): Db {
  const db = openDatabase({ file: ':memory:', checkHandles });
  db.sqlite.exec('CREATE TABLE t (v INTEGER)');
  return db;
}
const insert = (db: Db, v: number) => db.run(sql`INSERT INTO t VALUES (${v})`);
const values = async (db: Db) => (await db.all(sql<{ v: number }>`SELECT v FROM t ORDER BY v`)).map((r) => r.v);

describe('transactions', () => {
  test('commit on return, roll back on throw, rethrowing the error', async () => {
    const db = freshDb();
    assert.equal(await db.tx(async (tx) => { await insert(tx, 1); return 'ok'; }), 'ok');
    await assert.rejects(db.tx(async (tx) => { await insert(tx, 2); throw new Error('boom'); }), /boom/);
    assert.deepEqual(await values(db), [1]);
    assert.equal(db.sqlite.inTransaction, false);
  });

  test('a nested call is a savepoint: its failure undoes only itself', async () => {
    const db = freshDb();
    await db.tx(async (tx) => {
      await insert(tx, 1);
      await assert.rejects(tx.tx(async (inner) => { await insert(inner, 2); throw new Error('inner'); }));
      await tx.tx((a) => a.tx((b) => insert(b, 3)));
    });
    assert.deepEqual(await values(db), [1, 3]);
  });

  test('an outer failure undoes the inner savepoints too', async () => {
    const db = freshDb();
    await assert.rejects(db.tx(async (tx) => {
      await tx.tx((inner) => insert(inner, 1));
      throw new Error('outer');
    }));
    assert.deepEqual(await values(db), []);
    assert.equal(db.sqlite.inTransaction, false);
  });

  test('a constraint failure inside a transaction leaves the database usable', async () => {
    const db = freshDb();
    db.sqlite.exec('CREATE UNIQUE INDEX tu ON t (v)');
    await db.tx((tx) => insert(tx, 1));
    await assert.rejects(db.tx((tx) => insert(tx, 1)), /UNIQUE/);
    await db.tx((tx) => insert(tx, 2));
    assert.deepEqual(await values(db), [1, 2]);
  });

  test('statements of other requests wait for an open transaction: no uncommitted read, no interleaving', async () => {
    const db = freshDb();
    let release!: () => void;
    const paused = new Promise<void>((r) => { release = r; });
    const writer = db.tx(async (tx) => {
      await insert(tx, 1);
      await paused; // the transaction stays open across other requests' turns
      await insert(tx, 2);
    });
    await new Promise((r) => setImmediate(r));
    const reading = values(db); // another request, on the root handle
    let read: number[] | undefined;
    void reading.then((v) => { read = v; });
    await new Promise((r) => setImmediate(r));
    assert.equal(read, undefined, 'the read waited for the transaction');
    release();
    await writer;
    assert.deepEqual(await reading, [1, 2]);
  });

  test('the root handle inside a transaction is refused (it would wait for that transaction forever)', async () => {
    const db = freshDb();
    await assert.rejects(db.tx(async () => { await insert(db, 1); }), /root database handle was used inside a transaction/);
    assert.deepEqual(await values(db), []);
  });

  test('a transaction handle is dead once its transaction ended', async () => {
    const db = freshDb();
    let kept: Db | undefined;
    await db.tx(async (tx) => { kept = tx; });
    await assert.rejects(insert(kept!, 1), /after its transaction ended/);
  });

  test('write() on a transaction handle runs inside that transaction', async () => {
    const db = freshDb();
    await assert.rejects(db.tx(async (tx) => {
      await tx.write((inner) => insert(inner, 1));
      throw new Error('outer');
    }));
    assert.deepEqual(await values(db), []);
  });
});

describe('executor and schema', () => {
  test('Kysely-built queries run with booleans bound as 0/1', async () => {
    const db = openDatabase({ file: ':memory:' });
    await migrate(db, 0);
    const inserted = await db.get(db.qb.insertInto('users').values({ email: 'A@b', password_hash: 'x', password_changed_at: 1, created_at: 1 }).returning('id'));
    assert.deepEqual(inserted, { id: 1 });
    // the email column is case-insensitive
    assert.deepEqual(await db.all(db.qb.selectFrom('users').select(['id', 'email']).where('email', '=', 'a@B')), [{ id: 1, email: 'A@b' }]);
    const r = await db.run(db.qb.updateTable('users').set({ tier: 'premium' }).where('id', '=', 1));
    assert.equal(r.changes, 1);
    assert.deepEqual(await db.get(sql<{ b: number }>`SELECT ${true} AS b`), { b: 1 });
    // rows(): arrays in the order of the select list, on the root handle and in a transaction; the statement they share
    // with all() (one cached statement per text) gives objects again afterwards
    const query = db.qb.selectFrom('users').select(['email', 'id', 'tier']).where('id', '=', 1);
    assert.deepEqual(await db.rows(query), [['A@b', 1, 'premium']]);
    await db.tx(async (tx) => { assert.deepEqual(await tx.rows(query), [['A@b', 1, 'premium']]); });
    assert.deepEqual(await db.all(query), [{ email: 'A@b', id: 1, tier: 'premium' }]);
    await assert.rejects(db.rows(sql`SELECT nope FROM users`), /no such column/);
    assert.deepEqual(await db.all(query), [{ email: 'A@b', id: 1, tier: 'premium' }], 'a failed rows() leaves no raw statement behind');
  });

  test('file databases use WAL, synchronous FULL and foreign keys; migrations are recorded and idempotent', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-db-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const db = openDatabase({ file: join(dir, 'x.db') });
    t.after(() => db.close());
    assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 2); // FULL
    assert.equal(db.sqlite.pragma('foreign_keys', { simple: true }), 1);
    assert.deepEqual(await migrate(db, 0), migrations.map((m) => m.name));
    assert.deepEqual(await migrate(db, 0), []);
    db.sqlite.prepare("INSERT INTO schema_migrations VALUES ('9999_future', 0)").run();
    await assert.rejects(migrate(db, 0), /newer gridkeeper.*9999_future/);
  });

  test('a file database syncs each write transaction itself and keeps synchronous=FULL for everything else', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-db-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'x.db');
    const db = openDatabase({ file });
    t.after(() => db.close());
    await db.script('CREATE TABLE t (v INTEGER)');
    // a write unit that writes nothing (no WAL frames yet) and one that does
    await db.write(async () => {});
    await Promise.all([1, 2, 3].map((v) => db.write((tx) => insert(tx, v))));
    assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 2, 'FULL again once the transaction is over');
    assert.ok(statSync(`${file}-wal`).size > 0, 'the commits went to the WAL');
    // another connection (another process) sees every acknowledged write
    const other = openDatabase({ file, readonly: true });
    t.after(() => other.close());
    assert.deepEqual(await values(other), [1, 2, 3]);
    // a failed unit restores the level too
    await assert.rejects(db.tx(async (tx) => { await insert(tx, 4); throw new Error('no'); }));
    assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 2);
  });

  test('a failing migration leaves nothing half-applied', async () => {
    const db = openDatabase({ file: ':memory:' });
    const broken = [{ name: '0001_ok', sql: 'CREATE TABLE a (x)' }, { name: '0002_bad', sql: 'CREATE TABLE b (x); INSERT INTO nowhere VALUES (1);' }];
    await assert.rejects(migrate(db, 0, broken), /nowhere/);
    const tables = db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    assert.deepEqual(tables, ['a', 'schema_migrations']);
    assert.deepEqual(db.sqlite.prepare('SELECT name FROM schema_migrations').pluck().all(), ['0001_ok']);
  });
});
