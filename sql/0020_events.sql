-- Events out (docs/api.md#events): the outbox of changes and where each goes.
-- events: one row per event, written in the unit of work of the change it tells of (src/events/outbox.ts); the id
-- orders them, uid is the public id (webhook-id, the idempotency key). audience, role_id and device_id decide at
-- delivery time which subscriptions may receive it (src/access/subscribers.ts).
CREATE TABLE events (
  id            INTEGER PRIMARY KEY,
  uid           TEXT NOT NULL UNIQUE,
  type          TEXT NOT NULL,
  at            INTEGER NOT NULL,                 -- Unix ms
  subject_kind  TEXT NOT NULL,
  subject_id    TEXT,
  audience      TEXT NOT NULL CHECK (audience IN ('role', 'member', 'device', 'license', 'root')),
  role_id       INTEGER,
  device_id     INTEGER,
  data          TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX events_at ON events (at);

-- A subscription belongs to a role and receives what that role may read. kind webhook: url and sealed secrets;
-- kind mqtt: the topic prefix on the configured broker. types: the filter as given (JSON); event_subscription_types
-- holds one row per entry for the fan-out's lookup.
CREATE TABLE event_subscriptions (
  id               INTEGER PRIMARY KEY,
  role_id          INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  kind             TEXT NOT NULL CHECK (kind IN ('webhook', 'mqtt')),
  name             TEXT NOT NULL,
  url              TEXT,
  topic_prefix     TEXT,
  types            TEXT NOT NULL DEFAULT '["*"]',
  secret           TEXT,                          -- sealed whsec_ secret (webhook)
  previous_secret  TEXT,                          -- sealed, signs too until previous_until (rotation)
  previous_until   INTEGER,
  enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  disabled_at      INTEGER,
  disabled_reason  TEXT,
  failing_since    INTEGER,                       -- first failed attempt since the last success
  failures         INTEGER NOT NULL DEFAULT 0,    -- failed attempts since the last success
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;
CREATE INDEX event_subscriptions_role ON event_subscriptions (role_id);

CREATE TABLE event_subscription_types (
  type             TEXT NOT NULL,                 -- an event type, 'noun.*' or '*'
  subscription_id  INTEGER NOT NULL REFERENCES event_subscriptions (id) ON DELETE CASCADE,
  PRIMARY KEY (type, subscription_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX event_subscription_types_subscription ON event_subscription_types (subscription_id);

-- One row per (event, subscription). pending: due at next_at; a claim moves next_at past the lease and sets lease, so
-- no other node takes it while the attempt runs (and takes it over should this node die).
CREATE TABLE event_deliveries (
  id               INTEGER PRIMARY KEY,
  subscription_id  INTEGER NOT NULL REFERENCES event_subscriptions (id) ON DELETE CASCADE,
  event_id         INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'skipped')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_at          INTEGER NOT NULL,
  lease            TEXT,
  created_at       INTEGER NOT NULL,
  done_at          INTEGER,
  last_status      INTEGER,
  last_error       TEXT
) STRICT;
CREATE INDEX event_deliveries_due ON event_deliveries (subscription_id, next_at) WHERE state = 'pending';
CREATE INDEX event_deliveries_log ON event_deliveries (subscription_id, id);
CREATE INDEX event_deliveries_event ON event_deliveries (event_id);

CREATE TABLE event_attempts (
  id           INTEGER PRIMARY KEY,
  delivery_id  INTEGER NOT NULL REFERENCES event_deliveries (id) ON DELETE CASCADE,
  at           INTEGER NOT NULL,
  duration_ms  INTEGER NOT NULL,
  status       INTEGER,                           -- HTTP status; null: no answer (error says why)
  error        TEXT,
  response     TEXT                               -- the first bytes of the answer's body
) STRICT;
CREATE INDEX event_attempts_delivery ON event_attempts (delivery_id);
