// Prometheus metrics (prom-client). Requests are labelled by route pattern, never the raw path, so ids cannot
// explode the label space. One registry per app instance keeps tests independent.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/open.ts';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route'>;
  bucketRejections: Counter<'reason'>;
  telemetryPointsWritten: Counter;
  databaseBytes: Gauge;
}

export function createMetrics(databaseBytes: () => number, pool?: () => PoolStats, stagedEntries?: () => number): Metrics {
  const registry = new Registry();
  if (pool !== undefined) registerPoolMetrics(registry, pool);
  if (stagedEntries !== undefined) {
    new Gauge({
      name: 'gridkeeper_telemetry_staged_entries',
      help: 'Acknowledged telemetry points not yet folded into their shard tables: SQLite, groups of up to 4,096 points; PostgreSQL, the write requests of this node',
      registers: [registry], collect() { this.set(stagedEntries()); },
    });
  }
  return {
    registry,
    requests: new Counter({
      name: 'gridkeeper_http_requests_total', help: 'HTTP requests by route pattern and status',
      labelNames: ['method', 'route', 'status'], registers: [registry],
    }),
    latency: new Histogram({
      name: 'gridkeeper_http_request_duration_seconds', help: 'HTTP request latency by route pattern',
      labelNames: ['method', 'route'], registers: [registry],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    bucketRejections: new Counter({
      name: 'gridkeeper_ratelimit_rejections_total', help: 'Telemetry queries refused by the cost bucket',
      labelNames: ['reason'], registers: [registry],
    }),
    telemetryPointsWritten: new Counter({
      name: 'gridkeeper_telemetry_points_written_total', help: 'Telemetry points stored', registers: [registry],
    }),
    databaseBytes: new Gauge({
      name: 'gridkeeper_database_size_bytes', help: 'Size of the SQLite database (pages x page size)',
      registers: [registry], collect() { this.set(databaseBytes()); },
    }),
  };
}

/** PostgreSQL: the connection pool's figures, read when scraped. */
function registerPoolMetrics(registry: Registry, pool: () => PoolStats): void {
  const gauge = (name: string, help: string, read: (p: PoolStats) => number) => new Gauge({
    name, help, registers: [registry], collect() { this.set(read(pool())); },
  });
  // totals since start: a counter set to the pool's own count when scraped
  const total = (name: string, help: string, read: (p: PoolStats) => number) => new Counter({
    name, help, registers: [registry], collect() { this.reset(); this.inc(read(pool())); },
  });
  gauge('gridkeeper_database_pool_size', 'Connections the PostgreSQL pool may open', (p) => p.size);
  new Gauge({
    name: 'gridkeeper_database_pool_connections', help: 'PostgreSQL connections open now, by state', labelNames: ['state'],
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'busy' }, p.open - p.idle);
      this.set({ state: 'idle' }, p.idle);
    },
  });
  gauge('gridkeeper_database_pool_waiting', 'Requests waiting for a PostgreSQL connection', (p) => p.waiting);
  gauge('gridkeeper_database_prepared_statements', 'Statement texts sent as named prepared statements (0: off, e.g. behind a pooler that does not keep them)', (p) => p.prepared);
  total('gridkeeper_database_unavailable_total', 'Statements or connections that failed because PostgreSQL could not be reached', (p) => p.unavailable);
  total('gridkeeper_database_write_retries_total', 'Write transactions run again after a serialization failure or deadlock', (p) => p.retries);
  total('gridkeeper_database_write_alone_total', 'Write units that ran alone after repeated conflicts', (p) => p.alone);
}
