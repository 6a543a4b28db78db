-- Nothing on SQLite: its write units run one after another on one connection. (PostgreSQL: sql/pg/0011_write_gate.sql.)
SELECT 1;
