CREATE TABLE licenses (
  id              TEXT PRIMARY KEY,
  key             TEXT NOT NULL UNIQUE,
  type            TEXT NOT NULL CHECK (type IN ('residential', 'commercial')),
  duration        INTEGER NOT NULL CHECK (duration >= 0),
  grid_kw         INTEGER,
  solar_kw        INTEGER,
  battery_kw      INTEGER,
  ev_kw           INTEGER,
  creation_date   INTEGER NOT NULL,
  activation_date INTEGER
) STRICT;

-- A license is linked to at most one controller; the row goes when the controller device is deleted.
CREATE TABLE license_datalink (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  license_id TEXT NOT NULL UNIQUE REFERENCES licenses (id) ON DELETE CASCADE,
  device_id  INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX license_datalink_device ON license_datalink (device_id);
