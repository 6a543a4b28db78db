// The telemetry reads of the embedded SQLite backend: every call answered at once, synchronously, from the connection
// (inside an exclusive section) through the catalogue mirror, its statement cache and its block statistics.
import type { SqliteConnection } from '../../db/open.ts';
import type { Catalogue } from './catalogue.ts';
import type { Namespace } from '../namespaces.ts';
import { aggregateRow, rangeStats } from './aggregate.ts';
import { addWindowStats, readPoints, seriesOfMeasurement } from './points.ts';
import { jsonRows, rawRows } from './rows.ts';
import { rfc3339NanoJson } from '../query/result.ts';
import type { TelemetryReads } from '../query/reads-types.ts';

export function sqliteReads(conn: SqliteConnection, catalogue: Catalogue): TelemetryReads {
  return {
    get generation() { return catalogue.generation; },
    lacking: false,
    find: (namespace) => catalogue.find(namespace),
    namespaces: () => (conn.prepare('SELECT namespace FROM telemetry_namespaces ORDER BY key').pluck().all() as string[])
      .map((text) => JSON.parse(text) as Namespace),
    seriesOfNode: (ns, measurement, nodeId) => catalogue.seriesOfNode(ns, measurement, nodeId),
    seriesOfMeasurement: (ns, measurement) => seriesOfMeasurement(conn, ns, measurement),
    readPoints: (shards, seriesId, fields, fromMs, toMs, edge) => readPoints(catalogue, shards, seriesId, fields, fromMs, toMs, edge),
    readRowsJson: (shards, seriesId, fields, fromMs, toMs, desc, take, into, timeJson = rfc3339NanoJson) => {
      jsonRows(catalogue, shards, seriesId, fields, fromMs, toMs, desc, take, timeJson, into);
    },
    rangeStats: (shards, seriesId, field, fromMs, toMs) => rangeStats(catalogue, shards, seriesId, field, fromMs, toMs),
    addWindowStats: (shards, seriesId, field, fromMs, toMs, firstMs, intervalMs, acc) =>
      addWindowStats(catalogue, shards, seriesId, field, fromMs, toMs, firstMs, intervalMs, acc),
    aggregateRow: (q, seriesId, columns) => aggregateRow(catalogue, q, seriesId, columns),
    rawRows: (q, seriesId, columns) => rawRows(catalogue, q, seriesId, columns),
  };
}
