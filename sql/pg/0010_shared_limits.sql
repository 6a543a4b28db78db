-- The telemetry query limiter's state, shared by every gridkeeper node on this database (docs/api.md#rate-limit,
-- #ip-bans; src/telemetry/rate-limit/shared-limits.ts), so a limit holds whatever node takes the requests. UNLOGGED:
-- no WAL for state that lives seconds to minutes; after a crash of the server the tables start empty, as a restarted
-- single node's memory does.

-- A leaky bucket per (user, tier): bucketKey(). level in unit·ms at `at`; idle (and swept) from drained_at on.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key        BIGINT PRIMARY KEY,
  level      BIGINT NOT NULL CHECK (level >= 0),
  at         BIGINT NOT NULL,
  drained_at BIGINT NOT NULL
);
CREATE INDEX rate_limit_buckets_drained ON rate_limit_buckets (drained_at);

-- An address that was told to retry later: its Retry-After, strikes (ms, oldest first) and ban.
CREATE UNLOGGED TABLE ip_ban_entries (
  ip           TEXT COLLATE "C" PRIMARY KEY,
  retry_until  BIGINT NOT NULL,
  strikes      BIGINT[] NOT NULL,
  banned_until BIGINT NOT NULL
);
