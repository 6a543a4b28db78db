-- One version of the whole telemetry catalogue (namespaces, fields, shards, series), so that a node may keep
-- catalogue rows between requests (src/telemetry/pg/pg-reads.ts): a read asks for the version in its snapshot's first
-- statement and uses what it kept only when that snapshot sees the version it was read under. Every statement that
-- changes a catalogue table changes the version in its own transaction (a trigger per table, whatever node or version
-- of gridkeeper runs it), so no snapshot sees a changed catalogue under an old version.
-- Random rather than counted, as the rights version (0012_rights_version.sql): a database restored to an earlier
-- state under a running node never meets its kept rows under the same value.
-- Catalogue changes are rare (a new namespace, field, series or shard; a widened shard; a prune), and they wait for
-- each other on this row until they commit. To never wait in a circle, the paths of this version that change the
-- catalogue lock the row first (src/telemetry/pg/pg-catalogue.ts, catalogueChanging), before any other lock.
CREATE TABLE telemetry_catalogue_version (
  one     BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
  version BIGINT NOT NULL
);

INSERT INTO telemetry_catalogue_version (version) VALUES (floor(random() * 9007199254740991)::bigint);

CREATE FUNCTION telemetry_catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE telemetry_catalogue_version SET version = floor(random() * 9007199254740991)::bigint;
  RETURN NULL;
END $$;

CREATE TRIGGER telemetry_namespaces_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON telemetry_namespaces
  FOR EACH STATEMENT EXECUTE FUNCTION telemetry_catalogue_changed();
CREATE TRIGGER telemetry_fields_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON telemetry_fields
  FOR EACH STATEMENT EXECUTE FUNCTION telemetry_catalogue_changed();
CREATE TRIGGER telemetry_shards_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON telemetry_shards
  FOR EACH STATEMENT EXECUTE FUNCTION telemetry_catalogue_changed();
CREATE TRIGGER telemetry_series_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON telemetry_series
  FOR EACH STATEMENT EXECUTE FUNCTION telemetry_catalogue_changed();
