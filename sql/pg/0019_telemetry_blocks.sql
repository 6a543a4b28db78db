-- PostgreSQL variant of sql/0019_telemetry_blocks.sql. The blocks are compressed already: stored out of line and not
-- compressed again (STORAGE EXTERNAL). telemetry_sealed is part of the catalogue: its changes change the catalogue
-- version (0016), so a node's kept catalogue rows never miss a sealed window.
CREATE TABLE telemetry_sealed (
  namespace_id BIGINT NOT NULL REFERENCES telemetry_namespaces (id),
  shard_window BIGINT NOT NULL,
  start_ms     BIGINT NOT NULL,
  end_ms       BIGINT NOT NULL,
  PRIMARY KEY (namespace_id, shard_window)
);
CREATE INDEX telemetry_sealed_end ON telemetry_sealed (end_ms);
CREATE TRIGGER telemetry_sealed_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON telemetry_sealed
  FOR EACH STATEMENT EXECUTE FUNCTION telemetry_catalogue_changed();

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
