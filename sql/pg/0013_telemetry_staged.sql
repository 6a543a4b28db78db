-- Staged telemetry writes (PostgreSQL; src/telemetry/pg/pg-staging.ts). A write request stores its points here, sorted
-- and merged, as a few rows of arrays (one per shard table, measurement and up to 5,000 points) in its own transaction,
-- committed before its answer as every write is; a node then folds them into their shard tables in the background,
-- and a read folds whatever is still staged before its snapshot, so it sees every acknowledged point.
--   batch      the writing transaction's id (pg_current_xact_id): a request's rows share it, and a request that began
--              after another was acknowledged has a larger one; rows are folded whole batches at a time, in batch
--              order, so a re-written (series, time) ends with the later request's fields and no read sees half a request
--   part       the row's place in its request
--   table_name the shard table (its catalogue row): a write that staged for a table `telemetry prune` dropped meanwhile
--              fails on the reference and runs again with a fresh catalogue, as a direct insert would have; dropping the
--              catalogue row deletes the rows staged for it, in the same transaction
--   columns    the shard table's value columns the row writes (c<n>f, c<n>i, c<n>s), in order; the values of the k-th
--              column of a storage class are row k of that class's two-dimensional array (f, i or s)
CREATE TABLE telemetry_staged (
  batch        BIGINT NOT NULL,
  part         INTEGER NOT NULL,
  namespace_id BIGINT NOT NULL REFERENCES telemetry_namespaces (id),
  table_name   TEXT COLLATE "C" NOT NULL REFERENCES telemetry_shards (table_name) ON DELETE CASCADE,
  columns      TEXT[] NOT NULL,
  series_ids   BIGINT[] NOT NULL,
  t_ms         BIGINT[] NOT NULL,
  t_ns         INTEGER[] NOT NULL,
  f            DOUBLE PRECISION[],
  i            BIGINT[],
  s            TEXT[],
  points       INTEGER NOT NULL,
  PRIMARY KEY (batch, part)
);
CREATE INDEX telemetry_staged_namespace ON telemetry_staged (namespace_id, batch);
CREATE INDEX telemetry_staged_table ON telemetry_staged (table_name);

-- The arrays are compressed on their way into the table (TOAST), in the request: with pglz, the default, that cost a
-- 5,000-line request ~4 ms of the server's time; lz4 compresses them in a fraction of it (bench/README.md, issue 18).
-- A server built without lz4 stores them uncompressed instead (still faster than pglz).
DO $$
BEGIN
  ALTER TABLE telemetry_staged ALTER COLUMN series_ids SET COMPRESSION lz4, ALTER COLUMN t_ms SET COMPRESSION lz4,
    ALTER COLUMN t_ns SET COMPRESSION lz4, ALTER COLUMN f SET COMPRESSION lz4, ALTER COLUMN i SET COMPRESSION lz4,
    ALTER COLUMN s SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  ALTER TABLE telemetry_staged ALTER COLUMN series_ids SET STORAGE EXTERNAL, ALTER COLUMN t_ms SET STORAGE EXTERNAL,
    ALTER COLUMN t_ns SET STORAGE EXTERNAL, ALTER COLUMN f SET STORAGE EXTERNAL, ALTER COLUMN i SET STORAGE EXTERNAL,
    ALTER COLUMN s SET STORAGE EXTERNAL;
END $$;
