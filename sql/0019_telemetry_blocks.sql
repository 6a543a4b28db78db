-- Sealed telemetry (docs/api.md#telemetry-blocks): once a shard window has closed, its points move from the window's
-- shard table (the head) into one compressed column block per series (src/telemetry/blocks/), with statistics per
-- field; the shard table and its telemetry_shards row go once empty. A window may hold both while late points arrive
-- for it (a late write makes its shard table again); reads merge them, the head's values winning.

-- The windows with points in blocks.
CREATE TABLE telemetry_sealed (
  namespace_id INTEGER NOT NULL REFERENCES telemetry_namespaces (id),
  shard_window INTEGER NOT NULL,
  start_ms     INTEGER NOT NULL,
  end_ms       INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, shard_window)
) STRICT, WITHOUT ROWID;
CREATE INDEX telemetry_sealed_end ON telemetry_sealed (end_ms);

-- One block per series and window; `stats` before `data`, so reading the statistics never reads the block's pages.
CREATE TABLE telemetry_blocks (
  series_id    INTEGER NOT NULL,
  start_ms     INTEGER NOT NULL,    -- the window's start
  namespace_id INTEGER NOT NULL REFERENCES telemetry_namespaces (id),
  rows         INTEGER NOT NULL CHECK (rows > 0),
  first_ms     INTEGER NOT NULL,
  last_ms      INTEGER NOT NULL,
  stats        BLOB NOT NULL,
  data         BLOB NOT NULL,
  PRIMARY KEY (series_id, start_ms)
) STRICT;
CREATE INDEX telemetry_blocks_window ON telemetry_blocks (namespace_id, start_ms);
