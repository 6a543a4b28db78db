-- Block statistics of the telemetry shard tables (PostgreSQL; src/telemetry/pg/pg-block-stats.ts): count, sum, min and
-- max of one column of one series over one block, 1/24th of its shard's window (an hour of a 1-day shard), so that an
-- aggregate over a long range reads its whole blocks from here and scans only its edges. Any node may write points,
-- so what is kept must be checked against every fold, wherever it ran:
--   telemetry_block_marks  one row per block of every shard table (made with its catalogue row, by the trigger below);
--                          each fold that writes points into a block gives it a new version, from one sequence, in the
--                          statement that writes them: a trigger on the staged row's deletion, which the fold's
--                          statement makes (src/telemetry/pg/pg-staging.ts), so that every folder marks, whatever
--                          version of gridkeeper it runs (nodes of the previous one keep serving during an upgrade)
--   telemetry_block_stats  a block's statistics as a read computed them, with the version its snapshot saw: they hold
--                          while the block's mark still has that version, and are stored only if it still had it
--                          when they were written (a fold that committed after the read's snapshot changed it)
-- A block never folded into since the statistics were stored keeps them; dropping a shard's catalogue row (`telemetry
-- prune`) drops its marks and statistics with it. A recreated shard's marks come from the sequence, so no statistics
-- of a dropped table can match them.
CREATE SEQUENCE telemetry_block_version;

CREATE TABLE telemetry_block_marks (
  table_name TEXT COLLATE "C" NOT NULL REFERENCES telemetry_shards (table_name) ON DELETE CASCADE,
  block      INTEGER NOT NULL CHECK (block >= 0 AND block < 24),
  version    BIGINT NOT NULL DEFAULT nextval('telemetry_block_version'),
  PRIMARY KEY (table_name, block)
);

-- f columns (double precision) keep sum_f, min_f, max_f; i columns (bigint) keep sum_i (exact), min_i, max_i
CREATE TABLE telemetry_block_stats (
  table_name TEXT COLLATE "C" NOT NULL,
  series_id  BIGINT NOT NULL,
  col        TEXT COLLATE "C" NOT NULL CHECK (col ~ '^c[0-9]+[fi]$'),
  block      INTEGER NOT NULL,
  version    BIGINT NOT NULL,
  n          BIGINT NOT NULL CHECK (n >= 0),
  sum_f      DOUBLE PRECISION,
  min_f      DOUBLE PRECISION,
  max_f      DOUBLE PRECISION,
  sum_i      NUMERIC,
  min_i      BIGINT,
  max_i      BIGINT,
  PRIMARY KEY (table_name, series_id, col, block),
  FOREIGN KEY (table_name, block) REFERENCES telemetry_block_marks (table_name, block) ON DELETE CASCADE
);

CREATE FUNCTION telemetry_block_marks_of_shard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO telemetry_block_marks (table_name, block) SELECT NEW.table_name, b FROM generate_series(0, 23) AS b;
  RETURN NULL;
END $$;

CREATE TRIGGER telemetry_shards_block_marks AFTER INSERT ON telemetry_shards
  FOR EACH ROW EXECUTE FUNCTION telemetry_block_marks_of_shard();

INSERT INTO telemetry_block_marks (table_name, block) SELECT table_name, b FROM telemetry_shards, generate_series(0, 23) AS b;

-- The first and last time of a staged row's points, written by the node that stages it: the blocks between them are
-- marked without reading the row's times again (NULL in rows staged by a node of the previous version: read then).
ALTER TABLE telemetry_staged ADD COLUMN first_ms BIGINT, ADD COLUMN last_ms BIGINT;

-- A staged row deleted is a row folded into its shard table, in the same statement: its blocks get new versions (a
-- block is 1/24th of the window: BLOCKS_PER_SHARD in src/telemetry/block-stats.ts). A row deleted with its shard's
-- catalogue row (`telemetry prune`) finds no shard: the marks go with the shard.
CREATE FUNCTION telemetry_block_marks_of_fold() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  shard_start BIGINT;
  shard_end   BIGINT;
  lo          BIGINT;
  hi          BIGINT;
BEGIN
  SELECT start_ms, end_ms INTO shard_start, shard_end FROM telemetry_shards WHERE table_name = OLD.table_name;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  lo := coalesce(OLD.first_ms, (SELECT min(x) FROM unnest(OLD.t_ms) AS x));
  hi := coalesce(OLD.last_ms, (SELECT max(x) FROM unnest(OLD.t_ms) AS x));
  UPDATE telemetry_block_marks SET version = nextval('telemetry_block_version')
    WHERE table_name = OLD.table_name
      AND block BETWEEN (24 * (lo - shard_start)) / (shard_end - shard_start) AND (24 * (hi - shard_start)) / (shard_end - shard_start);
  RETURN NULL;
END $$;

CREATE TRIGGER telemetry_staged_folded AFTER DELETE ON telemetry_staged
  FOR EACH ROW EXECUTE FUNCTION telemetry_block_marks_of_fold();
