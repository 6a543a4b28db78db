-- Telemetry namespaces; shard tables are created at run time. (filled by the telemetry work)
SELECT 1;
