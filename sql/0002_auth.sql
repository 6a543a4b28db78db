-- Authentication: refresh-token sessions, two-factor state, recovery codes, failed-check throttles.
-- Times are Unix milliseconds (INTEGER).

-- One row per refresh token issued. `sid` is the refresh token's session id; the access and sudo tokens minted from it
-- carry the same sid. A token with a sid is accepted only while its row exists and `revoked_at` is null: logout revokes
-- one row, a password change every row of the user — in the database, so revocation survives restarts. Rows are
-- pruned well after the refresh token expired (no token that names them can still be valid by then).
CREATE TABLE sessions (
  sid        TEXT PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- Two-factor state, one row per user that ever started a TOTP setup.
-- totp_secret is the active base32 secret (it must be readable to verify codes); pending_secret comes from setup and
-- replaces it on enable. totp_last_step is the last accepted RFC 6238 time step: a code is never accepted twice.
CREATE TABLE two_factor (
  user_id           INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  totp_secret       TEXT,
  totp_enabled_at   INTEGER,
  totp_last_step    INTEGER,
  pending_secret    TEXT,
  pending_at        INTEGER,
  recovery_codes_at INTEGER,
  CHECK ((totp_secret IS NULL) = (totp_enabled_at IS NULL))
) STRICT;

-- Recovery codes, stored as HMAC-SHA-256 under a per-set random key (codes carry 80 bits, so a fast keyed hash is
-- enough; a leaked table reveals no code). Each works once: used_at is set when it is spent.
CREATE TABLE recovery_codes (
  id        INTEGER PRIMARY KEY,
  user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hash_key  BLOB NOT NULL,
  code_hash BLOB NOT NULL,
  used_at   INTEGER
) STRICT;
CREATE INDEX recovery_codes_user ON recovery_codes (user_id);

-- Failed secret checks for the throttles (sliding 15-minute windows). scope: password-user (subject = lower-cased
-- username, known or not), password-ip (subject = client address, IPv6 by /64), totp / recovery-code (subject = user id).
-- Kept in the database so a restart does not reset an attacker's count and no eviction can be forced; rows older
-- than the window are pruned.
CREATE TABLE auth_failures (
  id      INTEGER PRIMARY KEY,
  scope   TEXT NOT NULL CHECK (scope IN ('password-user', 'password-ip', 'totp', 'recovery-code')),
  subject TEXT NOT NULL,
  at      INTEGER NOT NULL
) STRICT;
CREATE INDEX auth_failures_subject ON auth_failures (scope, subject, at);
CREATE INDEX auth_failures_at ON auth_failures (at);
