-- PostgreSQL only (sql/pg/0017_telemetry_key_hashes.sql): SQLite's indexes hold keys of any length.
SELECT 1;
