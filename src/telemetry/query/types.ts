// The shapes of a planned query request (query-plan.ts), apart so that the readers of the plan (the backends' reads,
// the executor) can name them without importing the planner.
import type { NamespaceInfo, ShardInfo } from '../catalogue-types.ts';
import type { QueryEstimate, RequestEstimate } from '../cost.ts';
import type { Namespace } from '../namespaces.ts';
import type { Query } from '../telemetry.schemas.ts';

export interface PlannedQuery {
  /** statement_id: the query's position in the request */
  index: number;
  query: Query;
  namespace: Namespace;
  /** where.tags.nodeId, which authorizes the query */
  nodeId: string | undefined;
  /** the range read: [fromMs, toMs), possibly empty; without a lower bound, from the oldest point stored */
  fromMs: number;
  toMs: number;
  /** the time of a row of functions: the lower bound, or 0 (1970-01-01) without one, as InfluxDB answers */
  rowMs: number;
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
