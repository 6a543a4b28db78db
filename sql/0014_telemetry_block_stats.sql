-- PostgreSQL only (sql/pg/0014_telemetry_block_stats.sql): on SQLite the block statistics are kept in the process's
-- memory (src/telemetry/block-stats.ts), the only process that writes the file.
SELECT 1;
