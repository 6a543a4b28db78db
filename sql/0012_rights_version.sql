-- The rights version: one value that changes in the same transaction as every write to the tables the readable set of
-- a user is made of (members, manages, monitors; deletes cascaded from roles, users and devices included). A node's
-- in-memory readable sets (src/access/rights.ts) are kept with the version they were computed under and used only while
-- the database still holds that version, so no cached set outlives a change of rights, on any node.
-- The value is random rather than counted: a database restored to an earlier state can never meet a cache entry made
-- for a later state under the same value.
CREATE TABLE rights_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;
INSERT INTO rights_version (id, version) VALUES (1, random());

CREATE TRIGGER members_insert_rights AFTER INSERT ON members BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER members_update_rights AFTER UPDATE ON members BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER members_delete_rights AFTER DELETE ON members BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER manages_insert_rights AFTER INSERT ON manages BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER manages_update_rights AFTER UPDATE ON manages BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER manages_delete_rights AFTER DELETE ON manages BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER monitors_insert_rights AFTER INSERT ON monitors BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER monitors_update_rights AFTER UPDATE ON monitors BEGIN UPDATE rights_version SET version = random(); END;
CREATE TRIGGER monitors_delete_rights AFTER DELETE ON monitors BEGIN UPDATE rights_version SET version = random(); END;
