// Group commit: units of one event-loop turn share one transaction, each stays all-or-nothing, callers settle after
// the commit, and a failed commit fails every unit of the batch.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { groupCommit, type GroupCommit } from '../../src/db/group-commit.ts';

function scratch(): { db: Db; writes: GroupCommit<Db>; commits: () => number } {
  const db = openDatabase({ file: ':memory:', checkHandles: true });
  db.sqlite.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER); CREATE TABLE child (id INTEGER PRIMARY KEY, k TEXT REFERENCES t (k))');
  let commits = 0;
  const writes = groupCommit<Db>((body) => { commits++; return db.tx(body); });
  return { db, writes, commits: () => commits };
}

const put = (tx: Db, k: string, v: number) => tx.run(sql`INSERT INTO t VALUES (${k}, ${v})`);
const value = async (db: Db, k: string) => (await db.get(sql<{ v: number }>`SELECT v FROM t WHERE k = ${k}`))?.v;
const count = async (db: Db, table: 't' | 'child') => (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;

describe('group commit', () => {
  it('units of one turn share one commit, run in order and see each other\'s writes', async () => {
    const { db, writes, commits } = scratch();
    const seen: number[] = [];
    const results = await Promise.all([1, 2, 3, 4].map((i) => writes.run(async (tx) => {
      seen.push(await count(tx, 't'));
      await put(tx, `k${i}`, i);
      return i * 10;
    })));
    assert.deepEqual(results, [10, 20, 30, 40]);
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.equal(commits(), 1);
    // a later turn is a new batch
    await writes.run((tx) => put(tx, 'k5', 5));
    assert.equal(commits(), 2);
  });

  it('a unit that throws is rolled back alone; its caller gets the error, the others succeed', async () => {
    const { db, writes } = scratch();
    const boom = new Error('boom');
    const [a, b, c] = await Promise.allSettled([
      writes.run((tx) => put(tx, 'a', 1)),
      writes.run(async (tx) => { await put(tx, 'b', 2); throw boom; }),
      writes.run((tx) => put(tx, 'c', 3)),
    ]);
    assert.equal(a.status, 'fulfilled');
    assert.deepEqual(b, { status: 'rejected', reason: boom });
    assert.equal(c.status, 'fulfilled');
    assert.deepEqual([await value(db, 'a'), await value(db, 'b'), await value(db, 'c')], [1, undefined, 3]);
  });

  it('callers settle only after the commit', async () => {
    const { db, writes } = scratch();
    let settled = false;
    const p = writes.run(async (tx) => { await put(tx, 'x', 1); }).then(() => { settled = true; });
    await Promise.resolve();
    assert.equal(settled, false);
    assert.equal(await value(db, 'x'), undefined); // nothing ran yet: the batch flushes on the next turn
    await p;
    assert.equal(db.sqlite.inTransaction, false);
    assert.equal(await value(db, 'x'), 1);
  });

  it('a commit that fails fails every unit of the batch and stores nothing', async () => {
    const { db, writes } = scratch();
    const results = await Promise.allSettled([
      writes.run((tx) => put(tx, 'ok', 1)),
      // a deferred foreign key violation is only detected by COMMIT
      writes.run(async (tx) => { await tx.run(sql`PRAGMA defer_foreign_keys = ON`); await tx.run(sql`INSERT INTO child (k) VALUES (${'missing'})`); }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal(db.sqlite.inTransaction, false);
    assert.equal(await value(db, 'ok'), undefined);
    assert.equal(await count(db, 'child'), 0);
    // the batcher still works afterwards
    await writes.run((tx) => put(tx, 'after', 2));
    assert.equal(await value(db, 'after'), 2);
  });

  it('Db.write is this group commit: a request reading meanwhile never sees a unit\'s uncommitted write', async () => {
    const { db } = scratch();
    const unit = db.write(async (tx) => { await put(tx, 'w', 1); await new Promise((r) => setTimeout(r, 5)); });
    await new Promise((r) => setImmediate(r));
    const during = value(db, 'w');
    await unit;
    // the read queued behind the open transaction and ran after its commit
    assert.equal(await during, 1);
  });
});
