// Executes a planned query request (contract §7.3) inside one read transaction (one consistent snapshot, even while a
// `telemetry prune` drops tables in another process). Each query is answered alone: Unauthorized, a bad field, or
// nothing matched never affects the others.
//
// Decisions (ours):
// - Series are answered separately (their full tag set is part of the answer), ordered by series key (tags sorted by
//   key, compared key by key, a prefix first — InfluxDB's order); `limit` counts points per series and `orderBy`
//   orders each series' points.
// - A point is a row of a series when at least one selected field has a value at that time.
// - A namespace or measurement that was never written matches nothing; a field unknown to a measurement that exists
//   is an error, as is a function of a string or boolean field, or functions mixed with plain fields.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/open.ts';
import { nodeRights } from './authorize.ts';
import { catalogueOf, type Catalogue, type FieldInfo, type MeasurementInfo, type ShardInfo } from './catalogue.ts';
import { FIELD_TYPES, FLOAT, INTEGER, UNSIGNED } from './line-scanner.ts';
import { planQueries, type PlannedQuery, type QueryPlan } from './query-plan.ts';
import { isoTimeJson, valueJson, type SeriesResult, type StatementResult } from './query-result.ts';
import type { SelectItem } from './telemetry.schemas.ts';

type AggregateFunction = 'sum' | 'min' | 'max' | 'mean';

interface Column {
  field: FieldInfo;
  fn: AggregateFunction | undefined;
  name: string;
}

class StatementError extends Error {}

/** Runs every query of the plan and returns the results in request order. */
export function runQueries(db: Db, userId: number, plan: QueryPlan, nowMs: number): StatementResult[] {
  const catalogue = catalogueOf(db);
  return db.sqlite.transaction(() => {
    catalogue.sync();
    // The catalogue may have changed since planning (a write created a shard, a prune dropped one): plan again.
    const current = plan.generation === catalogue.generation ? plan : planQueries(db, plan.queries.map((q) => q.query), nowMs);
    const allowed = nodeRights(db, userId, current.queries.flatMap((q) => (q.nodeId === undefined ? [] : [q.nodeId])), 'read');
    return current.queries.map((q): StatementResult => {
      if (q.nodeId === undefined || !allowed.get(q.nodeId)) return { statement_id: q.index, error: 'Unauthorized' };
      try {
        const series = runQuery(catalogue, q);
        return series.length === 0 ? { statement_id: q.index } : { statement_id: q.index, series };
      } catch (err) {
        if (err instanceof StatementError) return { statement_id: q.index, error: err.message };
        throw err;
      }
    });
  }).deferred();
}

function runQuery(catalogue: Catalogue, q: PlannedQuery): SeriesResult[] {
  const ns = q.stored;
  const m = ns?.measurements.get(q.query.from.measurement);
  if (ns === undefined || m === undefined) return [];
  const columns = resolveColumns(m, q.query.select);
  if (q.fromMs >= q.toMs) return [];
  const wanted = Object.entries(q.query.where?.tags ?? {});
  const out: SeriesResult[] = [];
  const names = ['time', ...columns.map((c) => c.name)];
  const aggregate = columns[0].fn !== undefined;
  for (const { id: seriesId, tags } of catalogue.seriesOfNode(ns, m.name, q.nodeId!)) {
    // nodeId already matched; other wanted tags are checked here.
    if (wanted.length > 1 && !wanted.every(([k, v]) => Object.hasOwn(tags, k) && tags[k] === v)) continue;
    const valuesJson = aggregate ? aggregateRow(catalogue, q, seriesId, columns) : rawRows(catalogue, q, seriesId, columns);
    if (valuesJson !== '') out.push({ name: m.name, tags, columns: names, valuesJson });
  }
  return out;
}

function resolveColumns(m: MeasurementInfo, select: readonly SelectItem[]): Column[] {
  const columns = select.map((item): Column => {
    const name = typeof item === 'string' ? item : item.field;
    const fn = typeof item === 'string' ? undefined : item.function;
    const field = m.fields.get(name);
    if (field === undefined) throw new StatementError(`field ${JSON.stringify(name)} does not exist in measurement ${JSON.stringify(m.name)}`);
    if (fn !== undefined && !isNumeric(field)) {
      throw new StatementError(`${fn}() needs a numeric field; ${JSON.stringify(name)} is ${FIELD_TYPES[field.kind]}`);
    }
    return { field, fn, name: fn === undefined ? name : `${fn}_${name}` };
  });
  const functions = columns.filter((c) => c.fn !== undefined).length;
  if (functions > 0 && functions < columns.length) {
    throw new StatementError('mixing functions and plain fields in one select is not supported');
  }
  return columns;
}

function isNumeric(field: FieldInfo): boolean {
  return field.kind === FLOAT || field.kind === INTEGER || field.kind === UNSIGNED;
}

function isInteger(field: FieldInfo): boolean {
  return field.kind === INTEGER || field.kind === UNSIGNED;
}

/** A field's column in a shard table, or NULL when the table predates the field (it was never widened for it). */
function columnIn(shard: ShardInfo, field: FieldInfo): string | undefined {
  return field.ordinal < shard.columns ? `c${field.ordinal}` : undefined;
}

/** Statements are cached per shard table (and its width) and query shape; the SQL is only built on a miss. */
function statement(catalogue: Catalogue, key: string, build: () => string): Statement {
  let stmt = catalogue.statements.get(key);
  if (stmt === undefined) {
    stmt = catalogue.prepareUncached(build()).raw(true);
    catalogue.statements.set(key, stmt);
  }
  return stmt;
}

// Integers beyond 2^53 are read as decimal text (exact) and every other value as a plain number, so no bigint is
// made per value.
const SAFE = 9007199254740991;
const exact = (col: string) => `CASE WHEN ${col} BETWEEN -${SAFE} AND ${SAFE} THEN ${col} ELSE CAST(${col} AS TEXT) END`;

/** The series' points as JSON rows `["time",v,...]`, comma-separated; '' when there are none. */
function rawRows(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): string {
  const desc = q.query.orderBy === 'DESC';
  const limit = q.query.limit ?? Infinity;
  const kinds = columns.map((c) => c.field.kind);
  const shape = `r${desc ? 'd' : 'a'}${columns.map((c) => c.field.ordinal).join(',')}`;
  let out = '';
  let rows = 0;
  for (let i = 0; i < q.shards.length && rows < limit; i++) {
    const shard = q.shards[desc ? q.shards.length - 1 - i : i];
    const cols = columns.map((c) => columnIn(shard, c.field));
    if (cols.every((c) => c === undefined)) continue;
    const stmt = statement(catalogue, `${shard.table}/${shard.columns}/${shape}`, () => {
      const present = [...new Set(cols.filter((c) => c !== undefined))];
      const dir = desc ? 'DESC' : 'ASC';
      const select = cols.map((c, k) => (c === undefined ? 'NULL' : isInteger(columns[k].field) ? exact(c) : c));
      return `SELECT t_ms, t_ns, ${select.join(', ')} FROM "${shard.table}"
        WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND (${present.map((c) => `${c} IS NOT NULL`).join(' OR ')})
        ORDER BY t_ms ${dir}, t_ns ${dir} LIMIT ?`;
    });
    const found = stmt.all(seriesId, q.fromMs, q.toMs, limit === Infinity ? -1 : limit - rows) as unknown[][];
    for (const r of found) {
      let row = `[${isoTimeJson(r[0] as number, r[1] as number)}`;
      for (let k = 0; k < kinds.length; k++) row += `,${valueJson(kinds[k], r[k + 2])}`;
      out += rows === 0 ? `${row}]` : `,${row}]`;
      rows++;
    }
  }
  return out;
}

interface Accumulator { count: number; sum: number | bigint; min: number | bigint | undefined; max: number | bigint | undefined }

/** The one row of a query with functions: `["<range start>",agg,...]`; '' when no selected field has a value. */
function aggregateRow(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): string {
  const acc: Accumulator[] = columns.map(() => ({ count: 0, sum: 0, min: undefined, max: undefined }));
  const shape = `a${columns.map((c) => `${c.fn}${c.field.ordinal}`).join(',')}`;
  for (const shard of q.shards) {
    const stmt = statement(catalogue, `${shard.table}/${shard.columns}/${shape}`, () => {
      const exprs = columns.map((c) => {
        const col = columnIn(shard, c.field) ?? 'NULL';
        // Integer aggregates as decimal text: exact beyond 2^53, combined across shards as bigint.
        const wrap = (e: string) => (isInteger(c.field) ? `CAST(${e} AS TEXT)` : e);
        const value = c.fn === 'min' ? `min(${col})` : c.fn === 'max' ? `max(${col})` : `sum(${col})`;
        return `count(${col}), ${wrap(value)}`;
      });
      return `SELECT ${exprs.join(', ')} FROM "${shard.table}" WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`;
    });
    let r: unknown[];
    try {
      r = stmt.get(seriesId, q.fromMs, q.toMs) as unknown[];
    } catch (err) {
      if (/integer overflow/i.test((err as Error).message)) throw new StatementError('integer overflow in sum()');
      throw err;
    }
    columns.forEach((c, i) => {
      const count = r[i * 2] as number;
      if (count === 0) return;
      const value = isInteger(c.field) ? BigInt(r[i * 2 + 1] as string) : r[i * 2 + 1] as number;
      const a = acc[i];
      a.count += count;
      if (c.fn === 'min') { if (a.min === undefined || value < a.min) a.min = value; }
      else if (c.fn === 'max') { if (a.max === undefined || value > a.max) a.max = value; }
      else a.sum = typeof value === 'bigint' ? BigInt(a.sum) + value : (a.sum as number) + value;
    });
  }
  if (acc.every((a) => a.count === 0)) return '';
  let row = `[${isoTimeJson(q.fromMs, 0)}`;
  columns.forEach((c, i) => {
    const a = acc[i];
    let v: number | bigint | undefined;
    if (a.count > 0) v = c.fn === 'min' ? a.min : c.fn === 'max' ? a.max : c.fn === 'sum' ? a.sum : Number(a.sum) / a.count;
    row += `,${v === undefined ? 'null' : valueJson(c.fn === 'mean' ? FLOAT : c.field.kind, v)}`;
  });
  return `${row}]`;
}
