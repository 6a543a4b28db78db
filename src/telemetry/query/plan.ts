// Plans a query request (docs/api.md#telemetry-query) before anything executes: per query its namespace, its half-open time range,
// the estimate of docs/api.md#cost and the shard tables the range overlaps. The cost limiter reads `estimate` (equal to
// estimateRequest() of the same body and clock), the executor reads the rest. Planning touches only the catalogue.
import type { NamespaceInfo, ShardInfo } from '../catalogue-types.ts';
import { estimateQuery, estimateRequest, hasLowerBound, queryRange } from '../cost.ts';
import { normalizeNamespace, shardWindowsOverlapping } from '../namespaces.ts';
import type { PlannedQuery, QueryPlan } from './types.ts';
import type { TelemetryReads } from './reads-types.ts';
import type { QueryBody } from '../telemetry.schemas.ts';

export type { PlannedQuery, QueryPlan } from './types.ts';

/** Plans with the catalogue as the reads know it. */
export function planQueries(reads: TelemetryReads, body: QueryBody, nowMs: number): QueryPlan {
  const list = Array.isArray(body) ? body : [body];
  const queries = list.map((query, index): PlannedQuery => {
    const namespace = normalizeNamespace('namespace' in query.from ? query.from.namespace : query.from);
    const range = queryRange(query, nowMs);
    const stored = reads.find(namespace);
    // without a lower bound the estimate assumes the worst-case range, the read covers all that is stored
    const bounded = hasLowerBound(query);
    const fromMs = bounded || stored === undefined ? range.fromMs : Math.min(range.fromMs, earliestStored(stored));
    const toMs = range.toMs;
    return {
      index, query, namespace, nodeId: query.where?.tags?.nodeId, fromMs, toMs, rowMs: bounded ? fromMs : 0,
      estimate: estimateQuery(query, nowMs), stored,
      shards: stored === undefined ? [] : shardsOverlapping(stored, fromMs, toMs),
    };
  });
  const shardTables = [...new Set(queries.flatMap((q) => q.shards.map((s) => s.table)))];
  return { single: !Array.isArray(body), queries, estimate: estimateRequest(list, nowMs), shardTables, generation: reads.generation };
}

/** The start of the namespace's oldest window holding points (+Infinity: none). */
export function earliestStored(ns: NamespaceInfo): number {
  let min = Infinity;
  for (const shard of ns.shards.values()) if (shard.startMs < min) min = shard.startMs;
  return min;
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
