// Executes a planned query request (contract §7.3) inside one read transaction (one consistent snapshot, even while a
// `telemetry prune` drops tables in another process). Each query is answered alone: Unauthorized, a bad field, or
// nothing matched never affects the others.
//
// Decisions (ours):
// - Series are answered separately (their full tag set is part of the answer), ordered by tag set; `limit` counts
//   points per series and `orderBy` orders each series' points.
// - A point is a row of a series when at least one selected field has a value at that time.
// - A namespace or measurement that was never written matches nothing; a field unknown to a measurement that exists
//   is an error, as is a function of a string or boolean field, or functions mixed with plain fields.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/open.ts';
import { mayReadNode, NodeRights } from './authorize.ts';
import { catalogueOf, type Catalogue, type FieldInfo, type MeasurementInfo, type ShardInfo } from './catalogue.ts';
import { BOOLEAN, FIELD_TYPES, FLOAT, INTEGER, UNSIGNED } from './line-scanner.ts';
import { planQueries, type PlannedQuery, type QueryPlan } from './query-plan.ts';
import type { Cell, SeriesResult, StatementResult } from './query-result.ts';
import type { SelectItem } from './telemetry.schemas.ts';

type AggregateFunction = 'sum' | 'min' | 'max' | 'mean';

interface Column {
  field: FieldInfo;
  fn: AggregateFunction | undefined;
  name: string;
}

class StatementError extends Error {}

/** Runs every query of the plan (re-planned inside the read transaction) and returns the results in request order. */
export function runQueries(db: Db, userId: number, plan: QueryPlan, nowMs: number): StatementResult[] {
  const catalogue = catalogueOf(db);
  const rights = new NodeRights(db, userId, mayReadNode);
  return db.sqlite.transaction(() => {
    catalogue.sync();
    // The catalogue may have changed since planning (another request wrote a new shard): plan again, same clock.
    const fresh = planQueries(db, plan.queries.map((q) => q.query), nowMs);
    return fresh.queries.map((q) => {
      if (q.nodeId === undefined || !rights.allows(q.nodeId)) return { statement_id: q.index, error: 'Unauthorized' };
      try {
        const series = runQuery(db, catalogue, q);
        return series.length === 0 ? { statement_id: q.index } : { statement_id: q.index, series };
      } catch (err) {
        if (err instanceof StatementError) return { statement_id: q.index, error: err.message };
        throw err;
      }
    });
  }).deferred();
}

function runQuery(db: Db, catalogue: Catalogue, q: PlannedQuery): SeriesResult[] {
  const ns = q.stored;
  const m = ns?.measurements.get(q.query.from.measurement);
  if (ns === undefined || m === undefined) return [];
  const columns = resolveColumns(m, q.query.select);
  if (q.fromMs >= q.toMs) return [];
  const wanted = Object.entries(q.query.where?.tags ?? {});
  const candidates = db.prepare('SELECT id, tags FROM telemetry_series WHERE namespace_id = ? AND measurement = ? AND node_id = ? ORDER BY tags')
    .all(ns.id, m.name, q.nodeId) as Array<{ id: number; tags: string }>;
  const out: SeriesResult[] = [];
  const names = ['time', ...columns.map((c) => c.name)];
  const aggregate = columns[0].fn !== undefined;
  for (const candidate of candidates) {
    const tags = JSON.parse(candidate.tags) as Record<string, string>;
    if (!wanted.every(([k, v]) => Object.hasOwn(tags, k) && tags[k] === v)) continue;
    const values = aggregate
      ? aggregateRow(catalogue, q, candidate.id, columns)
      : rawRows(catalogue, q, candidate.id, columns);
    if (values.length > 0) out.push({ name: m.name, tags, columns: names, values });
  }
  return out;
}

function resolveColumns(m: MeasurementInfo, select: readonly SelectItem[]): Column[] {
  const columns = select.map((item): Column => {
    const name = typeof item === 'string' ? item : item.field;
    const fn = typeof item === 'string' ? undefined : item.function;
    const field = m.fields.get(name);
    if (field === undefined) throw new StatementError(`field ${JSON.stringify(name)} does not exist in measurement ${JSON.stringify(m.name)}`);
    if (fn !== undefined && field.kind !== FLOAT && field.kind !== INTEGER && field.kind !== UNSIGNED) {
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

/** A field's column in a shard table, or NULL when the table predates the field (it was never widened for it). */
function columnIn(shard: ShardInfo, field: FieldInfo): string {
  return field.ordinal < shard.columns ? `c${field.ordinal}` : 'NULL';
}

function statement(catalogue: Catalogue, sqlText: string): Statement {
  let stmt = catalogue.statements.get(sqlText);
  if (stmt === undefined) {
    // Integers come back as bigint: exact beyond 2^53 (the time columns are converted with Number()).
    stmt = catalogue.prepareUncached(sqlText).safeIntegers(true);
    catalogue.statements.set(sqlText, stmt);
  }
  return stmt;
}

function rawRows(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): Cell[][] {
  const desc = q.query.orderBy === 'DESC';
  const limit = q.query.limit ?? Infinity;
  const shards = desc ? [...q.shards].reverse() : q.shards;
  const rows: Cell[][] = [];
  for (const shard of shards) {
    if (rows.length >= limit) break;
    const cols = columns.map((c) => columnIn(shard, c.field));
    const present = [...new Set(cols.filter((c) => c !== 'NULL'))];
    if (present.length === 0) continue;
    const dir = desc ? 'DESC' : 'ASC';
    const stmt = statement(catalogue, `SELECT t_ms, t_ns, ${cols.join(', ')} FROM "${shard.table}"
      WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND (${present.map((c) => `${c} IS NOT NULL`).join(' OR ')})
      ORDER BY t_ms ${dir}, t_ns ${dir} LIMIT ?`);
    const remaining = limit === Infinity ? -1 : limit - rows.length;
    for (const r of stmt.raw(true).all(seriesId, q.fromMs, q.toMs, remaining) as unknown[][]) {
      const row: Cell[] = [isoTime(Number(r[0]), Number(r[1]))];
      for (let i = 0; i < columns.length; i++) row.push(cell(columns[i].field, r[i + 2]));
      rows.push(row);
    }
  }
  return rows;
}

interface Accumulator { count: number; sum: number | bigint; min: number | bigint | undefined; max: number | bigint | undefined }

function aggregateRow(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): Cell[][] {
  const acc: Accumulator[] = columns.map(() => ({ count: 0, sum: 0, min: undefined, max: undefined }));
  for (const shard of q.shards) {
    const exprs = columns.map((c) => {
      const col = columnIn(shard, c.field);
      return `count(${col}), sum(${col}), min(${col}), max(${col})`;
    });
    const stmt = statement(catalogue, `SELECT ${exprs.join(', ')} FROM "${shard.table}" WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`);
    let r: unknown[];
    try {
      r = stmt.raw(true).get(seriesId, q.fromMs, q.toMs) as unknown[];
    } catch (err) {
      if (/integer overflow/i.test(String((err as Error).message))) throw new StatementError('integer overflow in sum()');
      throw err;
    }
    columns.forEach((_, i) => {
      const count = Number(r[i * 4]);
      if (count === 0) return;
      const a = acc[i];
      a.count += count;
      a.sum = addNumbers(a.sum, r[i * 4 + 1] as number | bigint);
      const min = r[i * 4 + 2] as number | bigint;
      const max = r[i * 4 + 3] as number | bigint;
      if (a.min === undefined || min < a.min) a.min = min;
      if (a.max === undefined || max > a.max) a.max = max;
    });
  }
  if (acc.every((a) => a.count === 0)) return [];
  const row: Cell[] = [isoTime(q.fromMs, 0)];
  columns.forEach((c, i) => {
    const a = acc[i];
    if (a.count === 0) { row.push(null); return; }
    switch (c.fn) {
      case 'sum': row.push(a.sum); break;
      case 'min': row.push(a.min!); break;
      case 'max': row.push(a.max!); break;
      case 'mean': row.push(Number(a.sum) / a.count); break;
    }
  });
  return [row];
}

/** Float sums stay numbers; integer sums stay exact bigints. */
function addNumbers(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a + b;
  if (typeof a === 'number' && a === 0 && typeof b === 'bigint') return b;
  return Number(a) + Number(b);
}

/** A stored value as its field's type. */
function cell(field: FieldInfo, value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (field.kind === BOOLEAN) return value === 1n || value === 1;
  return value as Cell;
}

/** ISO 8601 UTC with milliseconds; with nanoseconds (9 digits) when the point has a sub-millisecond part. */
export function isoTime(ms: number, subNs: number): string {
  const iso = new Date(ms).toISOString();
  return subNs === 0 ? iso : `${iso.slice(0, -1)}${String(subNs).padStart(6, '0')}Z`;
}
