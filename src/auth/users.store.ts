// Users as the authentication domain sees them: lookup by e-mail, password and tier updates, root membership.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { Tier, UsersTable } from '../db/schema.ts';

export interface UserRow {
  id: number;
  email: string;
  password_hash: string;
  tier: Tier;
  password_changed_at: number;
}

const USER_COLUMNS = ['id', 'email', 'password_hash', 'tier', 'password_changed_at'] as const satisfies readonly (keyof UsersTable)[];

/**
 * docs/api.md#email: addresses match whatever the case of their ASCII letters, and only those, on every backend (SQLite:
 * the column is COLLATE NOCASE; PostgreSQL: its unique index is on gk_ascii_lower(email), sql/pg/0018).
 */
function sameEmail(db: Db, email: string) {
  return db.backend === 'postgres' ? sql<boolean>`gk_ascii_lower(email) = gk_ascii_lower(${email})` : sql<boolean>`email = ${email}`;
}

/** What two addresses of one account have in common (docs/api.md#email): ASCII letters in lower case. */
export function emailKey(email: string): string {
  return email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.get(db.qb.selectFrom('users').select(USER_COLUMNS).where(sameEmail(db, email)));
}

export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.get(db.qb.selectFrom('users').select(USER_COLUMNS).where('id', '=', id));
}

/**
 * The one way a user is created (first start, `gridkeeper user add`, a member relation naming an unknown e-mail):
 * inserted unless the e-mail is taken (case-insensitively); returns the new id, or undefined when it existed.
 */
export async function insertUser(db: Db, email: string, passwordHash: string, now: number): Promise<number | undefined> {
  return (await db.get(db.qb.insertInto('users')
    .values({ email, password_hash: passwordHash, password_changed_at: now, created_at: now })
    .onConflict((oc) => oc.doNothing()) // the e-mail is the one unique key a new row can meet
    .returning('id')))?.id;
}

/** A new password: every token issued before it is void (the token generation moves on). */
export async function setPasswordHash(db: Db, userId: number, hash: string, now: number): Promise<void> {
  await db.run(db.qb.updateTable('users')
    .set((eb) => ({ password_hash: hash, password_changed_at: now, token_generation: eb('token_generation', '+', 1) }))
    .where('id', '=', userId));
}

/**
 * The same password hashed with today's parameters (passwords.ts needsRehash): nothing else changes, no token is
 * voided. Only while the stored hash is still `was`, so a password changed in the meantime is never overwritten.
 */
export async function upgradePasswordHash(db: Db, userId: number, was: string, hash: string): Promise<void> {
  await db.run(db.qb.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).where('password_hash', '=', was));
}

/** The generation a token issued now carries (0 for an unknown user: such a token is refused anyway). */
export async function tokenGeneration(db: Db, userId: number): Promise<number> {
  return (await db.get(db.qb.selectFrom('users').select('token_generation').where('id', '=', userId)))?.token_generation ?? 0;
}

/** Returns false when no user has that e-mail. */
export async function setTier(db: Db, email: string, tier: Tier): Promise<boolean> {
  return (await db.run(db.qb.updateTable('users').set({ tier }).where(sameEmail(db, email)))).changes === 1;
}

