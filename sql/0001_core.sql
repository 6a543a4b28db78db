-- Core: settings, signing keys, users, roles, manages and member relations.
-- Times are Unix milliseconds (INTEGER). Flags are 0/1 with CHECKs. AUTOINCREMENT so a deleted id is never handed out
-- again (clients cache ids; a reused id would silently point at another object).

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- Ed25519 signing keys as JWK. The newest non-retired key signs; retired keys keep verifying until their tokens expire.
CREATE TABLE signing_keys (
  kid         TEXT PRIMARY KEY,
  private_jwk TEXT NOT NULL,
  public_jwk  TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  retired_at  INTEGER
) STRICT;

CREATE TABLE users (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  email               TEXT NOT NULL COLLATE NOCASE UNIQUE,
  password_hash       TEXT NOT NULL,
  tier                TEXT NOT NULL DEFAULT 'basic' CHECK (tier IN ('free', 'basic', 'premium')),
  password_changed_at INTEGER NOT NULL,
  created_at          INTEGER NOT NULL
) STRICT;

CREATE TABLE roles (
  id                     INTEGER PRIMARY KEY AUTOINCREMENT,
  name                   TEXT NOT NULL,
  self_role_management   INTEGER NOT NULL CHECK (self_role_management IN (0, 1)),
  self_user_management   INTEGER NOT NULL CHECK (self_user_management IN (0, 1)),
  self_view_management   INTEGER NOT NULL CHECK (self_view_management IN (0, 1)),
  self_device_management INTEGER NOT NULL CHECK (self_device_management IN (0, 1)),
  self_report_management INTEGER NOT NULL CHECK (self_report_management IN (0, 1)),
  self_alarm_management  INTEGER NOT NULL CHECK (self_alarm_management IN (0, 1)),
  password_hash          TEXT,
  created_at             INTEGER NOT NULL
) STRICT;

CREATE TABLE manages (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_role_id    INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  child_role_id     INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  role_management   INTEGER NOT NULL CHECK (role_management IN (0, 1)),
  user_management   INTEGER NOT NULL CHECK (user_management IN (0, 1)),
  view_management   INTEGER NOT NULL CHECK (view_management IN (0, 1)),
  device_management INTEGER NOT NULL CHECK (device_management IN (0, 1)),
  report_management INTEGER NOT NULL CHECK (report_management IN (0, 1)),
  alarm_management  INTEGER NOT NULL CHECK (alarm_management IN (0, 1)),
  CHECK (parent_role_id <> child_role_id),
  UNIQUE (parent_role_id, child_role_id)
) STRICT;
-- Rights are mostly resolved upward (from a target role to its ancestors): child -> parents must be an index seek.
CREATE INDEX manages_child ON manages (child_role_id, parent_role_id);

CREATE TABLE members (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  UNIQUE (role_id, user_id)
) STRICT;
CREATE INDEX members_user ON members (user_id, role_id);
