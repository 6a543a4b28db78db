// Planning an InfluxQL SELECT onto the telemetry query layer: its sources become namespaces and measurements of the
// catalogue, its WHERE time range becomes the same half-open range a JSON query has (docs/api.md#telemetry-query: no upper bound =
// now, no lower bound = the namespace's worst-case range), hence the same shard tables and the same cost query.
import type { SelectStatement, Source } from './ast.ts';
import { splitCondition } from './condition.ts';
import { StatementError } from './errors.ts';
import type { Expr } from './ast.ts';
import { checkZone } from './time.ts';
import { validateSelect } from './validate.ts';
import type { FieldInfo, MeasurementInfo, NamespaceInfo, ShardInfo } from '../telemetry/catalogue-types.ts';
import { MAX_TIME_MS, MIN_TIME_MS, queryRange, type CostQuery, type TimeCondition } from '../telemetry/cost.ts';
import type { Namespace } from '../telemetry/namespaces.ts';
import { earliestStored, shardsOverlapping } from '../telemetry/query/plan.ts';
import type { SeriesRef, TelemetryReads } from '../telemetry/query/reads-types.ts';
import { seriesKeyOf } from '../telemetry/query/series-key.ts';

/** One attempt at a request (execute.ts): synchronous, over the backend's reads (telemetry/reads.ts). */
export interface QueryContext {
  reads: TelemetryReads;
  nowMs: number;
  /** ?db= and ?rp= of the request */
  database?: string;
  retentionPolicy?: string;
}

export interface PlannedSource {
  namespace: Namespace;
  /** undefined: never written (matches nothing) */
  ns: NamespaceInfo | undefined;
  measurements: MeasurementInfo[];
  fromMs: number;
  toMs: number;
  shards: ShardInfo[];
  /** the series of a measurement the caller may read, in series-key order */
  seriesOf(measurement: string): SeriesRef[];
  /** the same, of one nodeId only (a WHERE that requires `nodeId = '…'`: its series are found by index, not listed) */
  seriesOfNode(measurement: string, nodeId: string): SeriesRef[];
  /** the fields of a measurement the caller may learn (visibleFields) */
  fieldsOf(m: MeasurementInfo): ReadonlyMap<string, FieldInfo>;
}

export interface SelectPlan {
  stmt: SelectStatement;
  sources: PlannedSource[];
  /** the WHERE clause without its time conditions */
  filter: Expr | undefined;
  /** the nodeId the filter requires (`nodeId = '…'` in its top-level AND), if any */
  nodeId: string | undefined;
  explicitFromMs: number | undefined;
  /** the lower bound the answer starts at: explicitFromMs before the window read earlier for derivative(mean(x)) and its kin */
  answerFromMs: number | undefined;
  /**
   * the upper bound the answer ends at under ORDER BY time DESC: derivative(mean(x)) and its kin read one interval past
   * it (the window before the first in the answer's order); undefined when nothing is read past the query's end
   */
  answerToMs: number | undefined;
  /** the lower bound as answered for aggregates without GROUP BY time: [ms, sub-ms ns] */
  explicitFrom: [number, number] | undefined;
  /** one cost query per source (docs/api.md#cost) */
  cost: CostQuery[];
}

/** The namespace of a source: its own db / rp, else the request's; rp defaults to autogen. */
export function namespaceOf(ctx: QueryContext, src: { database?: string; retentionPolicy?: string }): Namespace {
  const database = src.database ?? ctx.database;
  if (database === undefined || database === '') throw new StatementError('database name required');
  return { version: '1', database, retentionPolicy: src.retentionPolicy ?? (ctx.retentionPolicy || 'autogen') };
}

/**
 * What an attempt learns: each nodeId's read right (known before the attempt, kept for the whole request: every nodeId
 * is checked once), each measurement's visible series, and the nodeIds met whose right is not known yet.
 */
export interface RequestMemo {
  rights: ReadonlyMap<string, boolean>;
  series: Map<string, SeriesRef[]>;
  unknown: Set<string>;
  /**
   * Every series of a measurement, read once per request and shared by its attempts (the catalogue generation they
   * were read in is checked: a changed catalogue reads them again).
   */
  lists: Map<string, { generation: number; all: SeriesRef[] }>;
  /** each measurement's fields the caller may learn (visibleFields) */
  fields: Map<string, ReadonlyMap<string, FieldInfo>>;
}

export const newMemo = (rights: ReadonlyMap<string, boolean>, lists: RequestMemo['lists'] = new Map()): RequestMemo =>
  ({ rights, series: new Map(), unknown: new Set(), lists, fields: new Map() });

/**
 * The series of a measurement the caller may read, by the rights in the memo (checked through the telemetry rules,
 * authorize.ts, between attempts). A series whose nodeId has no known right yet is not readable in this attempt, and
 * its nodeId goes to memo.unknown: the request then checks it and runs again (execute.ts).
 */
export function visibleSeries(ctx: QueryContext, memo: RequestMemo, ns: NamespaceInfo, measurement: string): SeriesRef[] {
  const key = `${ns.id}\u0000${measurement}`;
  const cached = memo.series.get(key);
  if (cached !== undefined) return cached;
  let listed = memo.lists.get(key);
  if (listed === undefined || listed.generation !== ctx.reads.generation) {
    const all = ctx.reads.seriesOfMeasurement(ns, measurement);
    listed = { generation: ctx.reads.generation, all };
    // PostgreSQL answers a list it has not fetched yet as empty: not one to keep
    if (!ctx.reads.lacking) memo.lists.set(key, listed);
  }
  const { all } = listed;
  const { rights, unknown } = memo;
  const visible = all.filter((s) => {
    const ok = rights.get(s.nodeId);
    if (ok === undefined) unknown.add(s.nodeId);
    return ok === true;
  });
  memo.series.set(key, visible);
  return visible;
}

/**
 * The fields of a measurement the caller may learn: every field when it may read every series of the measurement,
 * else only those with a point in a series it may read (a field only another tenant's devices write stays unnamed).
 */
export function visibleFields(ctx: QueryContext, memo: RequestMemo, ns: NamespaceInfo, m: MeasurementInfo): ReadonlyMap<string, FieldInfo> {
  const key = `${ns.id}\u0000${m.name}`;
  const cached = memo.fields.get(key);
  if (cached !== undefined) return cached;
  const visible = visibleSeries(ctx, memo, ns, m.name);
  const all = memo.lists.get(key)?.all ?? ctx.reads.seriesOfMeasurement(ns, m.name);
  let fields: ReadonlyMap<string, FieldInfo> = m.fields;
  if (visible.length < all.length) {
    const shards = [...ns.shards.values()].sort((a, b) => a.startMs - b.startMs);
    const present = new Map<string, FieldInfo>();
    for (const f of m.list) {
      for (const s of visible) {
        if (ctx.reads.readPoints(shards, s.id, [f], MIN_TIME_MS, MAX_TIME_MS, { desc: false, limit: 1 }).ms.length > 0) {
          present.set(f.name, f);
          break;
        }
      }
    }
    fields = present;
  }
  // PostgreSQL answers reads it has not fetched yet as empty: not an answer to keep
  if (!ctx.reads.lacking) memo.fields.set(key, fields);
  return fields;
}

/** visibleSeries for the series of one nodeId (the same rights rule; an unchecked nodeId with series goes to memo.unknown). */
export function visibleSeriesOfNode(ctx: QueryContext, memo: RequestMemo, ns: NamespaceInfo, measurement: string, nodeId: string): SeriesRef[] {
  const list = ctx.reads.seriesOfNode(ns, measurement, nodeId);
  if (list.length === 0) return [];
  const ok = memo.rights.get(nodeId);
  if (ok === undefined) memo.unknown.add(nodeId);
  if (ok !== true) return [];
  const refs = list.map((s) => ({ id: s.id, nodeId, tags: s.tags, key: seriesKeyOf(measurement, s.tags) }));
  refs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return refs.map(({ id, tags }) => ({ id, nodeId, tags }));
}

/** The nodeId a condition requires: `nodeId = '…'` (a tag, not cast to a field) joined to the rest by AND. */
export function requiredNodeId(e: Expr | undefined): string | undefined {
  if (e === undefined) return undefined;
  if (e.kind === 'paren') return requiredNodeId(e.expr);
  if (e.kind !== 'binary') return undefined;
  if (e.op === 'AND') return requiredNodeId(e.lhs) ?? requiredNodeId(e.rhs);
  if (e.op !== '=') return undefined;
  const isNodeId = (x: Expr) => x.kind === 'var' && x.name === 'nodeId' && x.cast !== 'field';
  if (isNodeId(e.lhs) && e.rhs.kind === 'string') return e.rhs.value;
  if (isNodeId(e.rhs) && e.lhs.kind === 'string') return e.lhs.value;
  return undefined;
}

export function matchMeasurements(ns: NamespaceInfo | undefined, src: Pick<Source, 'name' | 'regex'>): MeasurementInfo[] {
  if (ns === undefined) return [];
  if (src.name !== undefined) {
    const m = ns.measurements.get(src.name);
    return m === undefined ? [] : [m];
  }
  return [...ns.measurements.values()].filter((m) => src.regex!.test(m.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
}

const LOOK_BACK = new Set(['derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'moving_average', 'elapsed']);

function looksBack(e: Expr): boolean {
  if (e.kind === 'call') return (LOOK_BACK.has(e.name) && e.args[0]?.kind === 'call') || e.args.some(looksBack);
  if (e.kind === 'binary') return looksBack(e.lhs) || looksBack(e.rhs);
  if (e.kind === 'paren') return looksBack(e.expr);
  return false;
}

const clampTime = (ms: number) => Math.min(MAX_TIME_MS, Math.max(MIN_TIME_MS, Math.floor(ms)));

export function planSelect(ctx: QueryContext, stmt: SelectStatement, memo: RequestMemo): SelectPlan {
  if (stmt.into !== undefined) throw new StatementError('SELECT … INTO is not supported: gridkeeper does not write through InfluxQL');
  if (stmt.tz !== undefined) checkZone(stmt.tz);
  validateSelect(stmt);
  const { range, filter } = splitCondition(stmt.condition, ctx.nowMs);
  // derivative(mean(x)) and its kin need the window before the first in the answer's order: InfluxDB reads one
  // interval earlier, or under ORDER BY time DESC one interval later
  const timeDim = stmt.dimensions.find((d) => d.kind === 'time');
  const answerFromMs = range.fromMs;
  let answerToMs: number | undefined;
  if (timeDim !== undefined && stmt.fields.some((f) => looksBack(f.expr))) {
    if (!stmt.desc && range.fromMs !== undefined) range.fromMs -= timeDim.intervalNs / 1e6;
    if (stmt.desc) {
      answerToMs = range.toMs ?? ctx.nowMs;
      range.toMs = answerToMs + timeDim.intervalNs / 1e6;
    }
  }
  const time: TimeCondition[] = [];
  if (range.fromMs !== undefined) time.push({ operator: '>=', value: clampTime(range.fromMs) });
  if (range.toMs !== undefined) time.push({ operator: '<', value: clampTime(range.toMs) });
  const raw = !stmt.fields.some((f) => f.expr.kind === 'call' || f.expr.kind === 'binary');
  // sources naming the same namespace share one cost query
  const byKey = new Map<string, PlannedSource>();
  const cost: CostQuery[] = [];
  for (const src of stmt.sources) {
    const namespace = namespaceOf(ctx, src);
    const key = JSON.stringify(namespace);
    let planned = byKey.get(key);
    if (planned === undefined) {
      const q: CostQuery = { from: { namespace }, where: { time }, ...(raw && stmt.limit > 0 && stmt.dimensions.length === 0 ? { limit: stmt.limit + stmt.offset } : {}) };
      cost.push(q);
      const ns = ctx.reads.find(namespace);
      // without a lower bound the cost assumes the worst-case range, the read covers all that is stored
      const r = queryRange(q, ctx.nowMs);
      const fromMs = range.fromMs !== undefined || ns === undefined ? r.fromMs : Math.min(r.fromMs, earliestStored(ns));
      const toMs = r.toMs;
      const p: PlannedSource = {
        namespace, ns, measurements: [], fromMs, toMs,
        shards: ns === undefined || fromMs >= toMs ? [] : shardsOverlapping(ns, fromMs, toMs),
        seriesOf: (m) => (ns === undefined ? [] : visibleSeries(ctx, memo, ns, m)),
        seriesOfNode: (m, nodeId) => (ns === undefined ? [] : visibleSeriesOfNode(ctx, memo, ns, m, nodeId)),
        fieldsOf: (m) => (ns === undefined ? new Map() : visibleFields(ctx, memo, ns, m)),
      };
      byKey.set(key, p);
      planned = p;
    }
    for (const m of matchMeasurements(planned.ns, src)) if (!planned.measurements.includes(m)) planned.measurements.push(m);
  }
  return { stmt, sources: [...byKey.values()], filter, nodeId: requiredNodeId(filter), explicitFromMs: range.fromMs, answerFromMs, answerToMs, explicitFrom: range.fromExact, cost };
}
