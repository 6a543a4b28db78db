-- E-mail addresses match regardless of the case of their ASCII letters, and only those (docs/api.md#email), as SQLite's
-- NOCASE does: citext folded every letter (É = é) by the server's locale, so the same two addresses were one account
-- here and two on SQLite.
CREATE FUNCTION gk_ascii_lower(value TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');

ALTER TABLE users DROP CONSTRAINT users_email_key;
ALTER TABLE users ALTER COLUMN email TYPE TEXT COLLATE "C";
CREATE UNIQUE INDEX users_email ON users (gk_ascii_lower(email));
