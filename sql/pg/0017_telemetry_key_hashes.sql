-- Series keys and field names as long as InfluxDB allows (65,535 bytes, docs/api.md#telemetry-limits). A B-tree index
-- entry holds at most about 2.7 kB, so the catalogue's unique keys are SHA-256 digests of the names they stand for,
-- and series are found by nodeId through a hash index (which stores only the hash of its key).

-- The UTF-8 bytes' digest of a text: immutable in a UTF8 database, which gridkeeper requires.
CREATE FUNCTION gk_sha256(value TEXT) RETURNS BYTEA LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN sha256(convert_to(value, 'UTF8'));

-- A measurement, a tag set (JSON) and a field name hold no line break: E'\n' separates them unambiguously.
ALTER TABLE telemetry_series
  ADD COLUMN key_hash BYTEA GENERATED ALWAYS AS (gk_sha256(measurement || E'\n' || tags)) STORED,
  DROP CONSTRAINT telemetry_series_namespace_id_measurement_tags_key;
CREATE UNIQUE INDEX telemetry_series_key ON telemetry_series (namespace_id, key_hash);
DROP INDEX telemetry_series_node;
DROP INDEX telemetry_series_node_id;
CREATE INDEX telemetry_series_node ON telemetry_series USING hash (node_id);

ALTER TABLE telemetry_fields
  ADD COLUMN key_hash BYTEA GENERATED ALWAYS AS (gk_sha256(measurement || E'\n' || field)) STORED,
  ADD COLUMN measurement_hash BYTEA GENERATED ALWAYS AS (gk_sha256(measurement)) STORED,
  DROP CONSTRAINT telemetry_fields_pkey,
  DROP CONSTRAINT telemetry_fields_namespace_id_measurement_ordinal_key;
ALTER TABLE telemetry_fields
  ADD PRIMARY KEY (namespace_id, key_hash),
  ADD UNIQUE (namespace_id, measurement_hash, ordinal);
