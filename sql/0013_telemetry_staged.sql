-- PostgreSQL only (sql/pg/0013_telemetry_staged.sql): on SQLite the staging table is created on first use by the
-- process that folds it (src/telemetry/shard-rows.ts), and only for a database in a file.
SELECT 1;
