-- Long-lived API tokens (issue 14): credentials for gateways and dashboards that cannot refresh a 10-minute access
-- token. The secret (`gk_` + 192 random bits) is shown once; only its SHA-256 is kept, so a copy of the database
-- holds nothing a client could present. A SHA-256 without salt is enough here: the secret is random, not a password.
CREATE TABLE api_tokens (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  scopes       TEXT NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
  token_hash   TEXT NOT NULL UNIQUE,            -- hex SHA-256 of the whole token text
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,                         -- NULL: never
  last_used_at INTEGER
) STRICT;
CREATE INDEX api_tokens_user ON api_tokens (user_id);
