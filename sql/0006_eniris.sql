-- Eniris parity: companies, customers and orders, datalink ids, password reset.
-- Times are Unix milliseconds (INTEGER).

-- A company is a role marked as one. Its uuid is drawn the first time it is marked and kept from then on (also while
-- the mark is off), so a company keeps its identity however often it is toggled.
ALTER TABLE roles ADD COLUMN is_company INTEGER NOT NULL DEFAULT 0 CHECK (is_company IN (0, 1));
ALTER TABLE roles ADD COLUMN uuid TEXT;
CREATE UNIQUE INDEX roles_uuid ON roles (uuid) WHERE uuid IS NOT NULL;

-- Customers belong to a role (they go with it); orders hand licenses to a customer. A license is in at most one order.
CREATE TABLE customers (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  role_id       INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  creation_date INTEGER NOT NULL
) STRICT;
CREATE INDEX customers_role ON customers (role_id);

CREATE TABLE orders (
  id            TEXT PRIMARY KEY,
  customer_id   TEXT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  creation_date INTEGER NOT NULL
) STRICT;
CREATE INDEX orders_customer ON orders (customer_id);

CREATE TABLE order_licenses (
  order_id   TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  license_id TEXT NOT NULL UNIQUE REFERENCES licenses (id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  PRIMARY KEY (order_id, position)
) STRICT;

-- The Eniris API names a license's controller links by uuid. Existing links get one now; the trigger gives every new
-- link one as it is inserted, whichever code path inserts it.
ALTER TABLE license_datalink ADD COLUMN uuid TEXT;
UPDATE license_datalink SET uuid =
  lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));
CREATE UNIQUE INDEX license_datalink_uuid ON license_datalink (uuid);
CREATE TRIGGER license_datalink_uuid AFTER INSERT ON license_datalink WHEN NEW.uuid IS NULL
BEGIN
  UPDATE license_datalink SET uuid =
    lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
  WHERE id = NEW.id;
END;

-- Password reset tokens: 256 random bits handed out once by e-mail (or by the operator's reset-link command), stored
-- only as their SHA-256 (a fast hash is enough for a secret of that strength). Single use, 60 minutes.
CREATE TABLE password_reset_tokens (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash BLOB NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER
) STRICT;
CREATE INDEX password_reset_tokens_user ON password_reset_tokens (user_id);

-- Forgot-password requests, for the one-a-minute limit per address and per client address (kept in the database
-- like the login throttles, so a restart does not reset it). Rows older than the window are pruned.
CREATE TABLE password_reset_requests (
  id      INTEGER PRIMARY KEY,
  scope   TEXT NOT NULL CHECK (scope IN ('email', 'ip')),
  subject TEXT NOT NULL,
  at      INTEGER NOT NULL
) STRICT;
CREATE INDEX password_reset_requests_subject ON password_reset_requests (scope, subject, at);
