// Prometheus metrics (prom-client). Requests are labelled by route pattern, never the raw path, so ids cannot
// explode the label space. One registry per app instance keeps tests independent.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route'>;
  bucketRejections: Counter<'reason'>;
  telemetryPointsWritten: Counter;
  databaseBytes: Gauge;
}

export function createMetrics(databaseBytes: () => number): Metrics {
  const registry = new Registry();
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
