-- PostgreSQL only (sql/pg/0015_telemetry_piece_stats.sql): on SQLite the block statistics are kept in the process's
-- memory (src/telemetry/block-stats.ts).
SELECT 1;
