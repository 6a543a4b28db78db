-- PostgreSQL variant of sql/0020_telemetry_blocks.sql. The blocks are compressed already: stored out of line and not
-- compressed again (STORAGE EXTERNAL).
ALTER TABLE telemetry_shards
  ADD COLUMN head INTEGER NOT NULL DEFAULT 1 CHECK (head IN (0, 1)),
  ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1));

CREATE TABLE telemetry_blocks (
  series_id    BIGINT NOT NULL,
  start_ms     BIGINT NOT NULL,
  namespace_id BIGINT NOT NULL REFERENCES telemetry_namespaces (id),
  rows         INTEGER NOT NULL CHECK (rows > 0),
  first_ms     BIGINT NOT NULL,
  last_ms      BIGINT NOT NULL,
  stats        BYTEA NOT NULL,
  data         BYTEA NOT NULL,
  PRIMARY KEY (series_id, start_ms)
);
ALTER TABLE telemetry_blocks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX telemetry_blocks_window ON telemetry_blocks (namespace_id, start_ms);
