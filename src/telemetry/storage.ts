// Where telemetry is stored: the shard tables of the embedded SQLite database. The telemetry engine (catalogue, shard
// writer, queries, InfluxQL) runs synchronously on that connection (Db.exclusive). On PostgreSQL the rest of the API is
// served, but the telemetry engine is not yet ported: its endpoints answer 501 TELEMETRY_UNAVAILABLE instead of failing.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';

export function requireTelemetryStorage(db: Db): void {
  if (db.backend !== 'sqlite') {
    throw new ApiError('TELEMETRY_UNAVAILABLE', 'telemetry is stored in the embedded SQLite database only, for now: '
      + 'this installation runs on PostgreSQL (GRIDKEEPER_DATABASE_URL)');
  }
}
