// Executes a planned query request (docs/api.md#telemetry-query): first the rights of its nodeIds, then every query inside one
// read transaction (one consistent snapshot, even while a `telemetry prune` drops tables in another process). Each query is
// answered alone: Unauthorized, a bad field, or nothing matched never affects the others.
//
// Decisions (ours):
// - Series are answered separately (their full tag set is part of the answer), ordered by series key (tags sorted by
//   key, compared key by key, a prefix first — InfluxDB's order); `limit` counts points per series and `orderBy`
//   orders each series' points.
// - A point is a row of a series when at least one selected field has a value at that time.
// - A namespace or measurement that was never written matches nothing; a field unknown to a measurement that exists
//   is an error, as is a function of a string or boolean field, or functions mixed with plain fields.
import type { Db } from '../db/open.ts';
import { nodeRights } from './authorize.ts';
import { resolveColumns, StatementError } from './query/columns.ts';
import { planQueries } from './query/plan.ts';
import type { PlannedQuery, QueryPlan } from './query/types.ts';
import type { QueryBody } from './telemetry.schemas.ts';
import { inReadSnapshot, readAttempts } from './reads.ts';
import type { TelemetryReads } from './query/reads-types.ts';
import type { SeriesResult, StatementResult } from './query/result.ts';

export { appendRows } from './sqlite/rows.ts';

/** Plans against the catalogue as it is now (what a query request would read; runQueries plans in its own snapshot). */
export async function planQueryRequest(db: Db, body: QueryBody, nowMs: number): Promise<QueryPlan> {
  return readAttempts(db).run(db, (reads) => planQueries(reads, body, nowMs));
}

/**
 * Runs every query of the request and returns the results in request order. The rights of its nodeIds come first (the
 * shared rules are asynchronous); the queries are then planned and run synchronously over the backend's reads
 * (reads.ts), in one read snapshot: the plan and the rows it reads come from the same catalogue.
 */
export async function runQueries(db: Db, userId: number, body: QueryBody, nowMs: number): Promise<StatementResult[]> {
  const list = Array.isArray(body) ? body : [body];
  const nodeIds: string[] = [];
  for (const query of list) if (query.where?.tags?.nodeId !== undefined) nodeIds.push(query.where.tags.nodeId);
  const allowed = await nodeRights(db, userId, nodeIds, 'read');
  return inReadSnapshot(db, (reads) => planQueries(reads, body, nowMs).queries.map((q): StatementResult => {
    if (q.nodeId === undefined || !allowed.get(q.nodeId)) return { statement_id: q.index, error: 'Unauthorized' };
    try {
      const series = runQuery(reads, q);
      return series.length === 0 ? { statement_id: q.index } : { statement_id: q.index, series };
    } catch (err) {
      if (err instanceof StatementError) return { statement_id: q.index, error: err.message };
      throw err;
    }
  }));
}

function runQuery(reads: TelemetryReads, q: PlannedQuery): SeriesResult[] {
  const ns = q.stored;
  const m = ns?.measurements.get(q.query.from.measurement);
  if (ns === undefined || m === undefined) return [];
  const columns = resolveColumns(m, q.query.select);
  if (q.fromMs >= q.toMs) return [];
  const wanted = Object.entries(q.query.where?.tags ?? {});
  const out: SeriesResult[] = [];
  const names = ['time', ...columns.map((c) => c.name)];
  const aggregate = columns[0].fn !== undefined;
  for (const { id: seriesId, tags } of reads.seriesOfNode(ns, m.name, q.nodeId!)) {
    // nodeId already matched; other wanted tags are checked here.
    if (wanted.length > 1 && !wanted.every(([k, v]) => Object.hasOwn(tags, k) && tags[k] === v)) continue;
    const valuesJson = aggregate ? reads.aggregateRow(q, seriesId, columns) : reads.rawRows(q, seriesId, columns);
    if (valuesJson !== '') out.push({ name: m.name, tags, columns: names, valuesJson });
  }
  return out;
}

