// The SQL a piece of store code runs, and SQLite's EXPLAIN QUERY PLAN of each statement, for the benchmarks that print
// plans (roles.mjs, company-walks.mjs). Stores run their queries through Db.all/get/run (Kysely builders or `sql`
// templates); `recordStatements` hands the code a Db that compiles each query exactly as the backend does
// (src/db/compile.ts) and keeps the first SQL text and parameters of every distinct statement, then forwards the query to
// the real handle. Transactions are followed: the handle a tx/read/write callback receives records too.
// Embedded SQLite only (the plans are SQLite's); EXPLAIN runs on db.sqlite directly, outside any request.
import { bindable, compileQuery } from '../../src/db/compile.ts';

/** A Db that records into `seen` (SQL text -> parameters) and forwards everything to `db`. */
function recording(db, seen) {
  const note = (q) => {
    const c = compileQuery(q, db.qb);
    if (!seen.has(c.sql)) seen.set(c.sql, bindable(c.parameters));
    return q;
  };
  const spy = Object.create(db);
  Object.assign(spy, {
    all: (q) => db.all(note(q)),
    get: (q) => db.get(note(q)),
    run: (q) => db.run(note(q)),
    tx: (fn) => db.tx((tx) => fn(recording(tx, seen))),
    read: (fn) => db.read((tx) => fn(recording(tx, seen))),
    write: (fn) => db.write((tx) => fn(recording(tx, seen))),
  });
  return spy;
}

/**
 * Runs `fn(spy)` and returns the distinct statements it ran: SQL text -> bindable parameters (first call's).
 * @param {import('../../src/db/open.ts').Db} db
 * @param {(db: import('../../src/db/open.ts').Db) => Promise<unknown>} fn
 */
export async function recordStatements(db, fn) {
  const seen = new Map();
  await fn(recording(db, seen));
  return seen;
}

/** EXPLAIN QUERY PLAN rows ({ id, parent, detail }) of one statement with its parameters, on the SQLite connection. */
export function queryPlan(db, sqlText, params = []) {
  return db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sqlText}`).all(...params);
}
