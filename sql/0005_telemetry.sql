-- Telemetry catalogue (contract §7.1). The points themselves live in shard tables created at run time, one per
-- (namespace, shard window), named telemetry_shard_<namespace id>_<window> (a negative window is written m<abs>):
--   (series_id INTEGER, t_ms INTEGER, t_ns INTEGER, c0, c1, ... , PRIMARY KEY (series_id, t_ms, t_ns)) WITHOUT ROWID
-- where c<n> holds field number n of the series' measurement (see telemetry_fields) — src/telemetry/shard-store.ts.

-- A namespace: InfluxDB database + retention policy, v2 organization + bucket, or an IOx value. The figures are fixed
-- when it is created on first write (they follow from its name).
CREATE TABLE telemetry_namespaces (
  id                  INTEGER PRIMARY KEY,
  key                 TEXT NOT NULL UNIQUE,      -- namespaceKey(): v1/<db>/<rp>, v2/<org>/<bucket>, iox/<value>
  namespace           TEXT NOT NULL CHECK (json_valid(namespace) AND json_type(namespace) = 'object'),
  interval_ms         INTEGER NOT NULL CHECK (interval_ms > 0),
  shard_duration_ms   INTEGER NOT NULL CHECK (shard_duration_ms > 0),
  worst_case_range_ms INTEGER NOT NULL CHECK (worst_case_range_ms > 0),
  created_at          INTEGER NOT NULL
) STRICT;

-- The shard tables that exist: window k covers [k * shard_duration_ms, (k + 1) * shard_duration_ms).
CREATE TABLE telemetry_shards (
  namespace_id INTEGER NOT NULL REFERENCES telemetry_namespaces (id),
  shard_window INTEGER NOT NULL,
  table_name   TEXT NOT NULL UNIQUE,
  start_ms     INTEGER NOT NULL,
  end_ms       INTEGER NOT NULL,
  columns      INTEGER NOT NULL CHECK (columns >= 0),   -- value columns c0 .. c<columns - 1>
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, shard_window)
) STRICT, WITHOUT ROWID;
CREATE INDEX telemetry_shards_end ON telemetry_shards (end_ms);

-- A series: a measurement and its full tag set (always holding nodeId) within a namespace.
CREATE TABLE telemetry_series (
  id           INTEGER PRIMARY KEY,
  namespace_id INTEGER NOT NULL REFERENCES telemetry_namespaces (id),
  measurement  TEXT NOT NULL,
  tags         TEXT NOT NULL CHECK (json_valid(tags) AND json_type(tags) = 'object'),  -- keys sorted: the identity
  node_id      TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  UNIQUE (namespace_id, measurement, tags)
) STRICT;
-- Queries are always scoped to one nodeId (it is what authorizes them).
CREATE INDEX telemetry_series_node ON telemetry_series (namespace_id, measurement, node_id);
CREATE INDEX telemetry_series_node_id ON telemetry_series (node_id, namespace_id);

-- The fields of a measurement: each has one type for good (a point of another type is refused, like InfluxDB) and an
-- ordinal, the shard-table column c<ordinal> that holds it.
CREATE TABLE telemetry_fields (
  namespace_id INTEGER NOT NULL REFERENCES telemetry_namespaces (id),
  measurement  TEXT NOT NULL,
  field        TEXT NOT NULL,
  ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
  type         TEXT NOT NULL CHECK (type IN ('float', 'integer', 'unsigned', 'string', 'boolean')),
  PRIMARY KEY (namespace_id, measurement, field),
  UNIQUE (namespace_id, measurement, ordinal)
) STRICT, WITHOUT ROWID;
