-- Alarms (docs/api.md#alarms): rules held by a role, the evaluation state of each (rule, device), and the alarms raised.
-- alarm_rules: what to watch and when to raise. device_ids NULL: every device the role may read (narrowed by
-- node_type when given). kind above/below compares field values with threshold; noData raises when no point newer
-- than no_data_ms has arrived. notify: JSON [{ "userId", "language" }], mailed at most once per mail_interval_ms per device.
CREATE TABLE alarm_rules (
  id               INTEGER PRIMARY KEY,
  role_id          INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  name             TEXT NOT NULL,
  device_ids       TEXT,
  node_type        TEXT,
  namespace        TEXT NOT NULL,                 -- the namespace as given (JSON)
  namespace_key    TEXT NOT NULL,                 -- namespaceKey(): v1/<db>/<rp>, ...
  measurement      TEXT NOT NULL,
  field            TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('above', 'below', 'noData')),
  threshold        REAL,
  hysteresis       REAL NOT NULL DEFAULT 0 CHECK (hysteresis >= 0),
  hold_ms          INTEGER NOT NULL DEFAULT 0 CHECK (hold_ms >= 0),
  clear_hold_ms    INTEGER NOT NULL DEFAULT 0 CHECK (clear_hold_ms >= 0),
  no_data_ms       INTEGER CHECK (no_data_ms > 0),
  severity         TEXT NOT NULL CHECK (severity IN ('critical', 'major', 'minor', 'warning')),
  notify           TEXT NOT NULL DEFAULT '[]',
  mail_interval_ms INTEGER NOT NULL CHECK (mail_interval_ms >= 0),
  enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  created_by       INTEGER,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;
CREATE INDEX alarm_rules_role ON alarm_rules (role_id);

-- Where each (rule, device) stands, so evaluation resumes after a restart and on any node. phase: normal, pending
-- (breached since `since`, waiting for the hold), active (alarm_id open), clearing (recovered since `since`, waiting
-- for the clear hold), suppressed (cleared by hand while still breached: armed again once recovered). last_at: the
-- point time of the newest point evaluated; an older point is ignored, so late points cannot flap an alarm.
CREATE TABLE alarm_states (
  rule_id     INTEGER NOT NULL REFERENCES alarm_rules (id) ON DELETE CASCADE,
  device_id   INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  phase       TEXT NOT NULL CHECK (phase IN ('normal', 'pending', 'active', 'clearing', 'suppressed')),
  since       INTEGER,
  since_value REAL,
  last_at     INTEGER,
  last_value  REAL,
  alarm_id    INTEGER,
  mailed_at   INTEGER,
  PRIMARY KEY (rule_id, device_id)
) STRICT;
CREATE INDEX alarm_states_device ON alarm_states (device_id);

-- The alarms, open and past (ThingsBoard's lifecycle): active or cleared, acknowledged or not. At most one active
-- alarm per (rule, device). A deleted rule's alarms stay in the history (rule_id NULL, rule_name kept).
CREATE TABLE alarms (
  id           INTEGER PRIMARY KEY,
  rule_id      INTEGER REFERENCES alarm_rules (id) ON DELETE SET NULL,
  rule_name    TEXT NOT NULL,
  role_id      INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  device_id    INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  kind         TEXT NOT NULL,
  severity     TEXT NOT NULL,
  series       TEXT NOT NULL,                     -- JSON { namespace, measurement, field }
  value        REAL,                              -- the value that raised it (noData: none)
  start_at     INTEGER NOT NULL,                  -- point time the condition began
  raised_at    INTEGER NOT NULL,
  ack_at       INTEGER,
  ack_by       INTEGER REFERENCES users (id) ON DELETE SET NULL,
  ack_by_email TEXT,
  clear_at     INTEGER,
  cleared_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,  -- NULL with clear_at: cleared by the rule
  cleared_by_email TEXT,
  end_at       INTEGER                            -- point time the condition ended (or the manual clear)
) STRICT;
CREATE UNIQUE INDEX alarms_active ON alarms (rule_id, device_id) WHERE clear_at IS NULL;
CREATE INDEX alarms_device ON alarms (device_id, id);
CREATE INDEX alarms_role ON alarms (role_id, id);
CREATE INDEX alarms_start ON alarms (start_at);
