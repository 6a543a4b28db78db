-- PostgreSQL only (sql/pg/0016_telemetry_catalogue_version.sql): on SQLite one process writes the file and keeps its
-- catalogue mirror itself (src/telemetry/catalogue.ts).
SELECT 1;
