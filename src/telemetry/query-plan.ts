// Plans a query request (docs/api.md#telemetry-query) before anything executes: per query its namespace, its half-open time range,
// the estimate of docs/api.md#cost and the shard tables the range overlaps. The cost limiter reads `estimate` (equal to
// estimateRequest() of the same body and clock), the executor reads the rest. Planning touches only the catalogue.
import type { Db } from '../db/open.ts';
import { catalogueOf, type Catalogue, type NamespaceInfo, type ShardInfo } from './catalogue.ts';
import { estimateQuery, estimateRequest, queryRange, type QueryEstimate, type RequestEstimate } from './cost.ts';
import { normalizeNamespace, shardWindowsOverlapping, type Namespace } from './namespaces.ts';
import type { Query, QueryBody } from './telemetry.schemas.ts';

export interface PlannedQuery {
  /** statement_id: the query's position in the request */
  index: number;
  query: Query;
  namespace: Namespace;
  /** where.tags.nodeId, which authorizes the query */
  nodeId: string | undefined;
  /** the range read: [fromMs, toMs), possibly empty */
  fromMs: number;
  toMs: number;
  estimate: QueryEstimate;
  /** the namespace as stored, or undefined when it was never written */
  stored: NamespaceInfo | undefined;
  /** the existing shard tables [fromMs, toMs) overlaps, oldest first (estimate.scannedShards counts windows) */
  shards: ShardInfo[];
}

export interface QueryPlan {
  /** the body was one query, not an array: the answer is one object */
  single: boolean;
  queries: PlannedQuery[];
  /** docs/api.md#cost for the whole request */
  estimate: RequestEstimate;
  /** distinct shard tables the request scans */
  shardTables: string[];
  /** the catalogue generation planned against */
  generation: number;
}

/**
 * Plans against the catalogue as it is now (in an exclusive section of its own). No transaction is needed: runQueries
 * executes in one and plans again if the catalogue changed in between (a write created a shard, a prune in another
 * process dropped one).
 */
export async function planQueryRequest(db: Db, body: QueryBody, nowMs: number): Promise<QueryPlan> {
  return db.exclusive((conn) => {
    const catalogue = catalogueOf(conn);
    catalogue.sync();
    return planQueries(catalogue, body, nowMs);
  });
}

/** Plans with the catalogue as it is; call inside an exclusive section after catalogue.sync(). */
export function planQueries(catalogue: Catalogue, body: QueryBody, nowMs: number): QueryPlan {
  const list = Array.isArray(body) ? body : [body];
  const queries = list.map((query, index): PlannedQuery => {
    const namespace = normalizeNamespace('namespace' in query.from ? query.from.namespace : query.from);
    const { fromMs, toMs } = queryRange(query, nowMs);
    const stored = catalogue.find(namespace);
    return {
      index, query, namespace, nodeId: query.where?.tags?.nodeId, fromMs, toMs,
      estimate: estimateQuery(query, nowMs), stored,
      shards: stored === undefined ? [] : shardsOverlapping(stored, fromMs, toMs),
    };
  });
  const shardTables = [...new Set(queries.flatMap((q) => q.shards.map((s) => s.table)))];
  return { single: !Array.isArray(body), queries, estimate: estimateRequest(list, nowMs), shardTables, generation: catalogue.generation };
}

/** Existing shards of the namespace whose window overlaps [fromMs, toMs), oldest first. */
export function shardsOverlapping(ns: NamespaceInfo, fromMs: number, toMs: number): ShardInfo[] {
  const span = shardWindowsOverlapping(fromMs, toMs, ns.profile.shardDurationMs);
  if (span.count === 0) return [];
  const out: ShardInfo[] = [];
  // A range may span millions of windows (years of 1-day shards), a namespace holds few shards: walk the shorter list.
  if (span.count <= ns.shards.size) {
    for (let k = span.first; k <= span.last; k++) {
      const shard = ns.shards.get(k);
      if (shard !== undefined) out.push(shard);
    }
    return out;
  }
  for (const shard of ns.shards.values()) if (shard.window >= span.first && shard.window <= span.last) out.push(shard);
  return out.sort((a, b) => a.window - b.window);
}
