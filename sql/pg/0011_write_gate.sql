-- The lock write units take (src/db/postgres.ts WRITE_GATE): ROW SHARE by every unit, EXCLUSIVE by a unit that kept
-- failing on conflicts and runs alone. Only its lock is used; it holds no rows. Replaces a session-level advisory lock,
-- which a pooler in transaction mode (PgBouncer) cannot carry from one transaction to the next.
CREATE TABLE write_gate (id INTEGER PRIMARY KEY);
