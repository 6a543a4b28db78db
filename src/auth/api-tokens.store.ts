// API tokens: long-lived credentials with scopes, stored only as the SHA-256 of the secret.
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { Tier } from '../db/schema.ts';

export const API_TOKEN_SCOPES = ['api', 'telemetry:write', 'telemetry:read'] as const;
export type ApiTokenScope = (typeof API_TOKEN_SCOPES)[number];

/** Every API token starts with this; JWTs never do (they start with `eyJ`). */
export const API_TOKEN_PREFIX = 'gk_';
export const MAX_TOKENS_PER_USER = 100;
/** lastUsedAt is written at most this often per token: a busy gateway must not turn every request into a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export interface ApiTokenRow {
  id: number;
  user_id: number;
  name: string;
  scopes: ApiTokenScope[];
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

/** `gk_` + 192 random bits in base64url (32 characters). */
export function newApiTokenSecret(): string {
  return API_TOKEN_PREFIX + randomBytes(24).toString('base64url');
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function isApiTokenText(token: string): boolean {
  return token.startsWith(API_TOKEN_PREFIX);
}

type RawRow = Omit<ApiTokenRow, 'scopes'> & { scopes: string };
const toRow = (r: RawRow): ApiTokenRow => ({ ...r, scopes: JSON.parse(r.scopes) as ApiTokenScope[] });
const COLUMNS = ['id', 'user_id', 'name', 'scopes', 'created_at', 'expires_at', 'last_used_at'] as const;

export async function countApiTokens(db: Db, userId: number): Promise<number> {
  return Number((await db.get(db.qb.selectFrom('api_tokens').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId)))?.n ?? 0);
}

export async function insertApiToken(db: Db, row: { userId: number; name: string; scopes: ApiTokenScope[]; hash: string; now: number; expiresAt: number | null }): Promise<ApiTokenRow> {
  const { id } = (await db.get(db.qb.insertInto('api_tokens').values({
    user_id: row.userId, name: row.name, scopes: JSON.stringify(row.scopes), token_hash: row.hash,
    created_at: row.now, expires_at: row.expiresAt, last_used_at: null,
  }).returning('id')))!;
  return { id, user_id: row.userId, name: row.name, scopes: row.scopes, created_at: row.now, expires_at: row.expiresAt, last_used_at: null };
}

export async function listApiTokens(db: Db, userId: number): Promise<ApiTokenRow[]> {
  return (await db.all(db.qb.selectFrom('api_tokens').select(COLUMNS).where('user_id', '=', userId).orderBy('id'))).map(toRow);
}

export async function deleteApiToken(db: Db, userId: number, id: number): Promise<boolean> {
  return (await db.run(db.qb.deleteFrom('api_tokens').where('id', '=', id).where('user_id', '=', userId))).changes === 1;
}

/**
 * The token with this hash, with its user's rate-limit tier (read together: the request that presents it may need it).
 * A `sql` template: every request with an API token runs it, and a template compiles in a fraction of a builder's time.
 */
export async function findApiTokenByHash(db: Db, hash: string): Promise<(ApiTokenRow & { tier: Tier }) | undefined> {
  const r = await db.get(sql<RawRow & { tier: Tier }>`SELECT t.id, t.user_id, t.name, t.scopes, t.created_at, t.expires_at,
    t.last_used_at, u.tier FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ${hash}`);
  return r === undefined ? undefined : { ...toRow(r), tier: r.tier };
}

export async function touchApiToken(db: Db, id: number, now: number): Promise<void> {
  await db.run(db.qb.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', id));
}
