-- count, sum, min and max of one column of series over pieces of shard tables (src/telemetry/pg/pg-block-stats.ts):
-- a whole block's from telemetry_block_stats while its mark keeps the version they were stored under
-- (0014_telemetry_block_stats.sql), every other piece (a range's edges, a block without statistics) from the shard
-- table's rows. A statement naming shard tables is parsed and planned on every call (~0.7 ms of the server for a
-- 1-day mean over two shards: a UNION ALL of lateral joins per shard); this function's own text never changes, so
-- its lookup of statistics keeps its plan, and only the scans, one per shard table, small, are planned each call.
--   p_tables                   the shard tables, group g at p_tables[g + 1]
--   p_sgrp, p_sid              the series of each group
--   p_pgrp, p_k, p_block,      the pieces of each group: k its place (1-based) in the group's pieces, block -1 for an
--     p_lo, p_hi               edge, its times [lo, hi)
-- One row per (series, piece) of its group; sums, minima and maxima as text (exact for integer columns; a float's
-- text is its shortest exact form). version: the block's mark in this snapshot (NULL for an edge).
CREATE FUNCTION telemetry_piece_stats(p_col TEXT, p_tables TEXT[], p_sgrp INTEGER[], p_sid BIGINT[],
  p_pgrp INTEGER[], p_k INTEGER[], p_block INTEGER[], p_lo BIGINT[], p_hi BIGINT[])
RETURNS TABLE (grp INTEGER, sid BIGINT, k INTEGER, version TEXT, stored BOOLEAN, n INTEGER, total TEXT, low TEXT, high TEXT)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  r          RECORD;
  g          INTEGER := -1;
  ints       BOOLEAN := right(p_col, 1) = 'i';
  scan       TEXT;
  s_sid      BIGINT[] := '{}';
  s_k        INTEGER[] := '{}';
  s_version  TEXT[] := '{}';
  s_lo       BIGINT[] := '{}';
  s_hi       BIGINT[] := '{}';
BEGIN
  IF p_col !~ '^c[0-9]+[fi]$' THEN
    RAISE EXCEPTION 'telemetry_piece_stats: not a numeric column: %', p_col;
  END IF;
  scan := format('SELECT $1, x.sid, x.k, x.version, false, a.n::integer, a.total, a.low, a.high
    FROM unnest($2::bigint[], $3::integer[], $4::text[], $5::bigint[], $6::bigint[]) AS x(sid, k, version, lo, hi)
    CROSS JOIN LATERAL (SELECT count(%1$I) AS n, sum(%1$I)::text AS total, min(%1$I)::text AS low, max(%1$I)::text AS high
      FROM %%I WHERE series_id = x.sid AND t_ms >= x.lo AND t_ms < x.hi AND %1$I IS NOT NULL) AS a', p_col);
  -- in group order: a group's pieces without statistics are scanned, in one statement, once its rows are through
  FOR r IN SELECT s.grp, s.sid, p.k, m.version::text AS version, p.lo, p.hi, st.n,
      CASE WHEN ints THEN st.sum_i::text ELSE st.sum_f::text END AS total,
      CASE WHEN ints THEN st.min_i::text ELSE st.min_f::text END AS low,
      CASE WHEN ints THEN st.max_i::text ELSE st.max_f::text END AS high
    FROM unnest(p_sgrp, p_sid) AS s(grp, sid)
    JOIN unnest(p_pgrp, p_k, p_block, p_lo, p_hi) AS p(grp, k, block, lo, hi) ON p.grp = s.grp
    LEFT JOIN telemetry_block_marks AS m ON m.table_name = p_tables[s.grp + 1] AND m.block = p.block
    LEFT JOIN telemetry_block_stats AS st ON st.table_name = m.table_name AND st.series_id = s.sid AND st.col = p_col
      AND st.block = m.block AND st.version = m.version
    ORDER BY s.grp
  LOOP
    IF r.grp <> g THEN
      IF cardinality(s_sid) > 0 THEN
        RETURN QUERY EXECUTE format(scan, p_tables[g + 1]) USING g, s_sid, s_k, s_version, s_lo, s_hi;
        s_sid := '{}'; s_k := '{}'; s_version := '{}'; s_lo := '{}'; s_hi := '{}';
      END IF;
      g := r.grp;
    END IF;
    IF r.n IS NOT NULL THEN
      grp := r.grp; sid := r.sid; k := r.k; version := r.version; stored := true;
      n := r.n; total := r.total; low := r.low; high := r.high;
      RETURN NEXT;
    ELSE
      s_sid := s_sid || r.sid; s_k := s_k || r.k; s_version := s_version || r.version; s_lo := s_lo || r.lo; s_hi := s_hi || r.hi;
    END IF;
  END LOOP;
  IF cardinality(s_sid) > 0 THEN
    RETURN QUERY EXECUTE format(scan, p_tables[g + 1]) USING g, s_sid, s_k, s_version, s_lo, s_hi;
  END IF;
END $$;
