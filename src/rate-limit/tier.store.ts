// The one read the limiter makes per request. A `sql` template, not the query builder: building and compiling a
// builder query on every telemetry query would cost more than the whole charge, while the template compiles cheaply to
// the same text every time (so its prepared statement comes from the connection's cache).
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { Tier } from './tiers.ts';

export async function findUserTier(db: Db, userId: number): Promise<Tier | undefined> {
  const row = await db.get(sql<{ tier: Tier }>`SELECT tier FROM users WHERE id = ${userId}`);
  return row?.tier;
}
