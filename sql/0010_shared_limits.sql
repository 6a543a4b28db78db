-- Nothing on SQLite: one process owns the file, so the telemetry query limiter's buckets and bans stay in its memory
-- (src/telemetry/rate-limit/rate-limiter.ts). The PostgreSQL text (sql/pg/0010_shared_limits.sql) creates the tables
-- that several nodes on one database share.
SELECT 1;
