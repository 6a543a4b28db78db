-- PostgreSQL only (sql/pg/0018_users_email_ascii.sql): users.email is COLLATE NOCASE here, which folds ASCII letters only.
SELECT 1;
