// Group commit: units of one event-loop turn share one transaction, each stays all-or-nothing, callers settle after
// the commit, and a failed commit fails every unit of the batch.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { groupCommit } from '../../src/db/group-commit.ts';

function scratch(): { db: Db; commits: () => number } {
  const db = openDatabase({ file: ':memory:' });
  db.sqlite.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER); CREATE TABLE child (id INTEGER PRIMARY KEY, k TEXT REFERENCES t (k))');
  let commits = 0;
  const tx = db.tx.bind(db);
  const counted: Db = { ...db, tx: <T>(fn: () => T): T => { const outer = !db.sqlite.inTransaction; const r = tx(fn); if (outer) commits++; return r; } };
  return { db: counted, commits: () => commits };
}

const value = (db: Db, k: string) => (db.sqlite.prepare('SELECT v FROM t WHERE k = ?').pluck().get(k) as number | undefined);

describe('group commit', () => {
  it('units of one turn share one commit, run in order and see each other\'s writes', async () => {
    const { db, commits } = scratch();
    const writes = groupCommit(db.tx);
    const seen: number[] = [];
    const results = await Promise.all([1, 2, 3, 4].map((i) => writes.run(() => {
      seen.push(db.sqlite.prepare('SELECT count(*) FROM t').pluck().get() as number);
      db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run(`k${i}`, i);
      return i * 10;
    })));
    assert.deepEqual(results, [10, 20, 30, 40]);
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.equal(commits(), 1);
    // a later turn is a new batch
    await writes.run(() => db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('k5', 5));
    assert.equal(commits(), 2);
  });

  it('a unit that throws is rolled back alone; its caller gets the error, the others succeed', async () => {
    const { db } = scratch();
    const writes = groupCommit(db.tx);
    const boom = new Error('boom');
    const [a, b, c] = await Promise.allSettled([
      writes.run(() => db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('a', 1)),
      writes.run(() => { db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('b', 2); throw boom; }),
      writes.run(() => db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('c', 3)),
    ]);
    assert.equal(a.status, 'fulfilled');
    assert.deepEqual(b, { status: 'rejected', reason: boom });
    assert.equal(c.status, 'fulfilled');
    assert.deepEqual([value(db, 'a'), value(db, 'b'), value(db, 'c')], [1, undefined, 3]);
  });

  it('callers settle only after the commit', async () => {
    const { db } = scratch();
    const writes = groupCommit(db.tx);
    let settled = false;
    const p = writes.run(() => { db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('x', 1); }).then(() => { settled = true; });
    await Promise.resolve();
    assert.equal(settled, false);
    assert.equal(value(db, 'x'), undefined); // nothing ran yet: the batch flushes on the next turn
    await p;
    assert.equal(db.sqlite.inTransaction, false);
    assert.equal(value(db, 'x'), 1);
  });

  it('a commit that fails fails every unit of the batch and stores nothing', async () => {
    const { db } = scratch();
    const writes = groupCommit(db.tx);
    const results = await Promise.allSettled([
      writes.run(() => db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('ok', 1)),
      // a deferred foreign key violation is only detected by COMMIT
      writes.run(() => { db.sqlite.pragma('defer_foreign_keys = ON'); db.sqlite.prepare('INSERT INTO child (k) VALUES (?)').run('missing'); }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal(db.sqlite.inTransaction, false);
    assert.equal(value(db, 'ok'), undefined);
    assert.equal(db.sqlite.prepare('SELECT count(*) FROM child').pluck().get(), 0);
    // the batcher still works afterwards
    await writes.run(() => db.sqlite.prepare('INSERT INTO t VALUES (?, ?)').run('after', 2));
    assert.equal(value(db, 'after'), 2);
  });
});
