-- Devices and monitors relations. `properties` is the device's JSON object; the well-known keys used for lookups are
-- generated columns so they can be indexed without being stored twice.
CREATE TABLE devices (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  properties  TEXT NOT NULL CHECK (json_valid(properties) AND json_type(properties) = 'object'),
  last_update INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  node_id     ANY GENERATED ALWAYS AS (json_extract(properties, '$.nodeId')) VIRTUAL,
  node_type   ANY GENERATED ALWAYS AS (json_extract(properties, '$.nodeType')) VIRTUAL
) STRICT;
CREATE UNIQUE INDEX devices_node_id ON devices (node_id) WHERE node_id IS NOT NULL;
CREATE INDEX devices_node_type ON devices (node_type) WHERE node_type IS NOT NULL;

CREATE TABLE monitors (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  role_id            INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  device_id          INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  monitor_management INTEGER NOT NULL CHECK (monitor_management IN (0, 1)),
  reads              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(reads) AND json_type(reads) = 'array'),
  edits              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(edits) AND json_type(edits) = 'array'),
  UNIQUE (role_id, device_id)
) STRICT;
-- device -> roles (rights checks walk up from these roles); role -> devices is served by the UNIQUE index.
CREATE INDEX monitors_device ON monitors (device_id, role_id);
