-- Sealed telemetry (docs/api.md#telemetry-blocks): once a shard window has closed, its points move from the window's row
-- table (the head) into one compressed column block per series (src/telemetry/blocks/), with statistics per field.
-- A window may hold both while late points arrive for it; reads merge them, the head's values winning.
--   head:   1 while the window's shard table exists (0 once sealing dropped it; a late write creates it again)
--   sealed: 1 once any point of the window is in telemetry_blocks
ALTER TABLE telemetry_shards ADD COLUMN head INTEGER NOT NULL DEFAULT 1 CHECK (head IN (0, 1));
ALTER TABLE telemetry_shards ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1));

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
