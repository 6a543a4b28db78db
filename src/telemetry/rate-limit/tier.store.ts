// The one read the limiter makes per request. Hand-written and prepared once (db.prepare caches it): building and
// compiling the same Kysely query on every telemetry query cost ~15 µs, several times the whole charge.
import type { Db } from '../../db/open.ts';
import type { Tier } from './tiers.ts';

export function findUserTier(db: Db, userId: number): Tier | undefined {
  const row = db.prepare('SELECT tier FROM users WHERE id = ?').get(userId) as { tier: Tier } | undefined;
  return row?.tier;
}
