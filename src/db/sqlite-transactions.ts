// The embedded backend's transactions, from cached statements: better-sqlite3's transaction(fn) builds a new wrapper
// on every call, the largest single cost of a device PATCH. Nested calls become savepoints (all named gk: SQLite
// releases or rolls back the most recent savepoint of that name).
import type Database from 'better-sqlite3';
import type { WriteLock } from './write-lock.ts';

export function sqliteTransactions(sqlite: Database.Database, lock: WriteLock | undefined) {
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const beginRead = sqlite.prepare('BEGIN DEFERRED');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const savepoint = sqlite.prepare('SAVEPOINT gk');
  const release = sqlite.prepare('RELEASE gk');
  const rollbackTo = sqlite.prepare('ROLLBACK TO gk');

  /** Ends a failed transaction (or savepoint) with what is left of it. */
  function undo(nested: boolean): void {
    // A failed statement may already have ended the transaction (SQLITE_FULL, some I/O errors): roll back what is left.
    if (sqlite.inTransaction) {
      if (nested) { rollbackTo.run(); release.run(); } else rollback.run();
    }
  }
  /** Commits the transaction (or releases the savepoint); a failed COMMIT rolls back. */
  function done(nested: boolean): void {
    try {
      (nested ? release : commit).run();
    } catch (err) {
      if (!nested && sqlite.inTransaction) rollback.run();
      throw err;
    }
  }
  /** Runs fn in an IMMEDIATE transaction (nested: a savepoint), under the file's write lock. */
  function transaction<T>(fn: () => T): T {
    const nested = sqlite.inTransaction;
    if (!nested) lock?.hold();
    try {
      (nested ? savepoint : begin).run();
      let result: T;
      try {
        result = fn();
        if (result instanceof Promise) throw new TypeError('a synchronous transaction function returned a promise');
      } catch (err) {
        undo(nested);
        throw err;
      }
      done(nested);
      return result;
    } finally {
      if (!nested) lock?.release();
    }
  }
  /** Runs fn in a read snapshot (BEGIN DEFERRED ... COMMIT); inside a transaction, simply within it. */
  function snapshot<T>(fn: () => T): T {
    if (sqlite.inTransaction) return fn();
    beginRead.run();
    try {
      return fn();
    } finally {
      if (sqlite.inTransaction) commit.run();
    }
  }
  /** A statement that may write, outside a transaction: under the write lock. */
  function locked<T>(step: () => T): T {
    if (lock === undefined || sqlite.inTransaction) return step();
    lock.hold();
    try {
      return step();
    } finally {
      lock.release();
    }
  }
  return { begin, beginRead, commit, savepoint, transaction, snapshot, undo, done, locked };
}
