// Rows of a shard table as the writers store them, shared by the three places that do: the shard writer of a request
// (shard-writer.ts, writing at once on a database in memory), the fold of staged points into their shard tables on
// the main thread (staging.ts) and in the fold worker (fold-worker.ts). Kept free of the catalogue so the worker's
// bundle stays small.
//
// A row is (series_id, t_ms, t_ns, c0 .. c<width - 1>) in cells: numbers in a Float64Array, NaN where a cell holds
// NULL, a string or a big integer (those in `others`, by cell index). Upserts of up to 64 rows per statement: a field
// a row lacks (NULL) keeps the stored value (`coalesce`), so re-writing a (series, time) overwrites exactly the given
// fields (InfluxDB semantics); rows of one statement run are in key order, equal keys in line order.
//
// A staged group (table telemetry_staged) is the same cells in key order: `cells` their float64 bytes, `others` the
// JSON of [cell index, "s" | "i", text] for strings and integers beyond 2^53 (written as their digits), `kinds` one
// character per value column, 'i' where the column holds integers (bound through CAST(? AS INTEGER)), '-' otherwise.
import type { Statement } from 'better-sqlite3';

/** Most rows per statement (a power of two); also bounded by SQLite's 32766 parameters. */
const MAX_ROWS = 64;
const MAX_PARAMS = 32766;

/** The staging table: created on first use (SQLite only). */
export const STAGED_TABLE_SQL = `CREATE TABLE IF NOT EXISTS telemetry_staged (
  id INTEGER PRIMARY KEY,
  shard_table TEXT NOT NULL,
  width INTEGER NOT NULL,
  kinds TEXT NOT NULL,
  rows INTEGER NOT NULL,
  cells BLOB NOT NULL,
  others TEXT,
  folded INTEGER NOT NULL DEFAULT 0
)`;

export type { RowGroup } from '../blocks/row-groups.ts';
import type { RowGroup } from '../blocks/row-groups.ts';

/** The upsert of `rows` rows into a shard table. */
export function insertSql(table: string, width: number, kinds: string, rows: number): string {
  let row = '(?, ?, ?';
  let cols = '';
  let updates = '';
  for (let c = 0; c < width; c++) {
    row += kinds[c] === 'i' ? ', CAST(? AS INTEGER)' : ', ?';
    cols += `, c${c}`;
    updates += `${c === 0 ? '' : ', '}c${c} = coalesce(excluded.c${c}, c${c})`;
  }
  row += ')';
  return `INSERT INTO "${table}" (series_id, t_ms, t_ns${cols}) VALUES ${Array(rows).fill(row).join(', ')}
    ON CONFLICT (series_id, t_ms, t_ns) DO UPDATE SET ${updates}`;
}

/**
 * Writes the group's rows in the order given (row indexes; undefined: as they are) with statements of up to 64 rows:
 * full statements, then the tail in power-of-two statements, so a group needs at most seven statement shapes. From
 * row `from`, and only until `stop(rows written so far)` says so after a statement: returns the rows written up to then (the next `from`).
 */
export function writeRows(group: RowGroup, statement: (rows: number) => Statement, order?: Uint32Array, from = 0, stop?: (written: number) => boolean): number {
  const { rows, numbers, others } = group;
  const perRow = 3 + group.width;
  let chunk = 1;
  while (chunk * 2 <= MAX_ROWS && chunk * 2 * perRow <= MAX_PARAMS) chunk *= 2;
  let done = from;
  for (let size = chunk; size >= 1; size >>= 1) {
    if (rows - done < size) continue;
    const args = new Array(size * perRow);
    const stmt = statement(size);
    while (rows - done >= size) {
      for (let r = 0; r < size; r++) {
        const from = (order === undefined ? done + r : order[done + r]) * perRow;
        const to = r * perRow;
        for (let c = 0; c < perRow; c++) {
          const v = numbers[from + c];
          args[to + c] = Number.isNaN(v) ? others?.get(from + c) ?? null : v;
        }
      }
      stmt.run(args);
      done += size;
      if (stop !== undefined && done < rows && stop(done - from)) return done;
    }
  }
  return done;
}

/** A staged group as stored: `rows` rows (from row `first` of `order`) copied into their own cells, in that order. */
export function stagedEntry(group: RowGroup, order: Uint32Array, first: number, rows: number): { cells: Buffer; others: string | null } {
  const perRow = 3 + group.width;
  const cells = new Float64Array(rows * perRow);
  let others: Array<[number, 's' | 'i', string]> | undefined;
  for (let r = 0; r < rows; r++) {
    const from = order[first + r] * perRow;
    cells.set(group.numbers.subarray(from, from + perRow), r * perRow);
    if (group.others === undefined) continue;
    for (let c = 3; c < perRow; c++) {
      if (!Number.isNaN(group.numbers[from + c])) continue;
      const v = group.others.get(from + c);
      if (v !== undefined) (others ??= []).push([r * perRow + c, typeof v === 'string' ? 's' : 'i', String(v)]);
    }
  }
  return { cells: Buffer.from(cells.buffer, cells.byteOffset, cells.byteLength), others: others === undefined ? null : JSON.stringify(others) };
}

/** A stored staged group, ready for writeRows. */
export function stagedGroup(row: { shard_table: string; width: number; kinds: string; rows: number; cells: Buffer; others: string | null }): RowGroup {
  // a view of the blob's bytes where they are 8-byte aligned (a blob of more than a few kB has its own buffer), else a copy
  const { cells } = row;
  let numbers: Float64Array;
  if (cells.byteOffset % 8 === 0) numbers = new Float64Array(cells.buffer, cells.byteOffset, cells.byteLength / 8);
  else {
    numbers = new Float64Array(cells.byteLength / 8);
    new Uint8Array(numbers.buffer).set(cells);
  }
  let others: Map<number, string | bigint> | undefined;
  if (row.others !== null) {
    others = new Map();
    for (const [i, kind, text] of JSON.parse(row.others) as Array<[number, 's' | 'i', string]>) others.set(i, kind === 's' ? text : BigInt(text));
  }
  return { table: row.shard_table, width: row.width, kinds: row.kinds, rows: row.rows, numbers, others };
}

/** Statements of a connection for writeRows, cached by SQL text (the fold's own cache; the shard writer uses the catalogue's). */
export function statementCache(prepare: (sqlText: string) => Statement, max = 200): (group: RowGroup) => (rows: number) => Statement {
  const cache = new Map<string, Statement>();
  return (group) => (rows) => {
    const sqlText = insertSql(group.table, group.width, group.kinds, rows);
    let stmt = cache.get(sqlText);
    if (stmt === undefined) {
      if (cache.size >= max) cache.clear();
      cache.set(sqlText, stmt = prepare(sqlText));
    }
    return stmt;
  };
}

/** Rows per staged entry at most (a fold may stop inside one: the main thread waits for one statement, not one entry). */
export const STAGED_ROWS = 4096;

/**
 * Folds staged entries into their shard tables, oldest first (those of the shard table `only`, when given), in the
 * open transaction of the caller (who commits), until `stop(rows)` says so (asked after each statement) or none is
 * left. An entry stopped in the middle keeps how far it was folded (`folded`), in the same transaction. Returns how
 * many entries were folded whole and how many rows were written (both 0: nothing was staged).
 */
export function foldStaged(
  db: { prepare(sqlText: string): Statement },
  statements: (group: RowGroup) => (rows: number) => Statement,
  stop: (rows: number) => boolean,
  only?: string,
): { entries: number; rows: number } {
  const columns = 'SELECT id, shard_table, width, kinds, rows, cells, others, folded FROM telemetry_staged';
  const oldest = only === undefined ? db.prepare(`${columns} ORDER BY id LIMIT 1`) : db.prepare(`${columns} WHERE shard_table = ? ORDER BY id LIMIT 1`);
  const next = { get: () => (only === undefined ? oldest.get() : oldest.get(only)) };
  const remove = db.prepare('DELETE FROM telemetry_staged WHERE id = ?');
  const progress = db.prepare('UPDATE telemetry_staged SET folded = ? WHERE id = ?');
  let entries = 0;
  let rows = 0;
  for (;;) {
    const row = next.get() as { id: number; shard_table: string; width: number; kinds: string; rows: number; cells: Buffer; others: string | null; folded: number } | undefined;
    if (row === undefined) return { entries, rows };
    const group = stagedGroup(row);
    const done = writeRows(group, statements(group), undefined, row.folded, (written) => stop(rows + written));
    rows += done - row.folded;
    if (done < group.rows) {
      progress.run(done, row.id);
      return { entries, rows };
    }
    remove.run(row.id);
    entries++;
    if (stop(rows)) return { entries, rows };
  }
}
