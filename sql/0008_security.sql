-- Security II: exact token revocation and the join-password throttle.

-- Every token carries the user's token generation at issue (claim `gen`); a password change increments it, so every
-- token issued before the change is refused — exactly, whatever second or millisecond either happened in.
ALTER TABLE users ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;

-- Wrong role join passwords (childRolePassword), counted per user and client address (IPv6 by /64) with growing
-- delays, and per user across addresses: a guesser slows only himself, never the role's other users. Rows older than a
-- day count for nothing and are pruned.
CREATE TABLE join_failures (
  id      INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  ip_key  TEXT NOT NULL,
  at      INTEGER NOT NULL
) STRICT;
CREATE INDEX join_failures_user_ip ON join_failures (user_id, ip_key, at);
CREATE INDEX join_failures_user ON join_failures (user_id, at);
CREATE INDEX join_failures_at ON join_failures (at);
