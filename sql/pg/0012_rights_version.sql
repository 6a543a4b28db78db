-- The rights version (see sql/0012_rights_version.sql): changed in the same transaction as every write to members,
-- manages and monitors, once per statement. Random rather than counted, so a restored database never meets a cache
-- entry of a later state under the same value.
CREATE TABLE rights_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO rights_version (id, version) VALUES (1, floor(random() * 9007199254740991)::bigint);

CREATE FUNCTION bump_rights_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE rights_version SET version = floor(random() * 9007199254740991)::bigint;
  RETURN NULL;
END $$;

CREATE TRIGGER members_rights AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON members
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rights_version();
CREATE TRIGGER manages_rights AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON manages
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rights_version();
CREATE TRIGGER monitors_rights AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON monitors
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rights_version();
