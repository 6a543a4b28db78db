-- The audit log: one row per change made through the API (and per failed login), written in the same unit of work as
-- the change. No foreign keys: an entry outlives the user, role or device it names. role_id / device_id / user_id say
-- what the entry is about, for deciding who may read it (POST /v1/audit/query); target_id is the target's id as text
-- (license ids are UUIDs). Secrets never go in: changes says that a password or second factor changed, never its value.
CREATE TABLE audit_log (
  -- ids page the log (afterId) and are never reused: a prune deletes the oldest entries only, in the unit that has
  -- just inserted a newer one, so the largest id always stays (and without AUTOINCREMENT no sqlite_sequence write)
  id             INTEGER PRIMARY KEY,
  at             INTEGER NOT NULL,                  -- Unix ms
  actor_user_id  INTEGER,
  actor_email    TEXT,
  actor_token    TEXT CHECK (actor_token IN ('access', 'sudo', 'refresh', 'partial', 'api')),
  actor_api_token INTEGER,                         -- the API token's id when actor_token = 'api'
  client_address TEXT,
  request_id     TEXT,
  action         TEXT NOT NULL,
  target_kind    TEXT NOT NULL CHECK (target_kind IN ('role', 'manages', 'member', 'device', 'monitors', 'license', 'user', 'customer', 'order', 'api-token')),
  target_id      TEXT,
  role_id        INTEGER,
  device_id      INTEGER,
  user_id        INTEGER,
  changes        TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor_user_id);
CREATE INDEX audit_log_target ON audit_log (target_kind, target_id);
