// The rows of the shared query limiter on PostgreSQL (sql/pg/0010_shared_limits.sql): buckets and address entries.
// Every write is conditioned on the row it read (compare and set), see shared-limits.ts.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { IpEntry } from './ip-bans.ts';
import type { Bucket } from './leaky-bucket.ts';

interface BucketRow { level: number; at: number; drained_at: number }
interface BanRow { retry_until: number; strikes: Array<number | string>; banned_until: number }

const bucketOf = (r: BucketRow): Bucket => ({ level: r.level, at: r.at, drainedAt: r.drained_at });
const entryOf = (r: BanRow): IpEntry => ({ retryUntil: r.retry_until, strikes: r.strikes.map(Number), bannedUntil: r.banned_until });

/** The bucket's row; undefined: an empty bucket. */
export async function readBucket(db: Db, key: number): Promise<Bucket | undefined> {
  const row = await db.get(sql<BucketRow>`SELECT level, at, drained_at FROM rate_limit_buckets WHERE key = ${key}`);
  return row === undefined ? undefined : bucketOf(row);
}

/** Writes `after` if the bucket's row is still `before` (no row: undefined); whether it did. */
export async function compareAndSetBucket(db: Db, key: number, before: Bucket | undefined, after: Bucket): Promise<boolean> {
  const { changes } = await db.run(before === undefined
    ? sql`INSERT INTO rate_limit_buckets (key, level, at, drained_at) VALUES (${key}, ${after.level}, ${after.at}, ${after.drainedAt})
        ON CONFLICT (key) DO NOTHING`
    : sql`UPDATE rate_limit_buckets SET level = ${after.level}, at = ${after.at}, drained_at = ${after.drainedAt}
        WHERE key = ${key} AND level = ${before.level} AND at = ${before.at} AND drained_at = ${before.drainedAt}`);
  return changes === 1;
}

/**
 * In one statement: writes `after` if the bucket's row is still `before` and nothing stands against the address.
 * `against`: the address has an entry; `changed`: the bucket was written.
 */
export async function chargeIfClear(db: Db, ip: string, key: number, before: Bucket, after: Bucket): Promise<{ against: boolean; changed: boolean }> {
  const r = (await db.get(sql<{ against: number; changed: number }>`WITH ban AS (SELECT 1 FROM ip_ban_entries WHERE ip = ${ip}),
    charge AS (UPDATE rate_limit_buckets SET level = ${after.level}, at = ${after.at}, drained_at = ${after.drainedAt}
      WHERE key = ${key} AND level = ${before.level} AND at = ${before.at} AND drained_at = ${before.drainedAt} AND NOT EXISTS (SELECT 1 FROM ban)
      RETURNING 1)
    SELECT (SELECT count(*) FROM ban)::integer AS against, (SELECT count(*) FROM charge)::integer AS changed`))!;
  return { against: r.against !== 0, changed: r.changed === 1 };
}

/** Deletes the buckets and address entries that hold nothing any more at `now`. */
export async function deleteIdleRows(db: Db, now: number): Promise<void> {
  await db.run(sql`DELETE FROM rate_limit_buckets WHERE drained_at <= ${now}`);
  await db.run(sql`DELETE FROM ip_ban_entries WHERE banned_until <= ${now} AND retry_until <= ${now}
    AND (cardinality(strikes) = 0 OR strikes[cardinality(strikes)] <= ${now - 60_000})`);
}

/** The address's entry; `lock`: under the row's lock until the transaction ends. */
export async function readIpEntry(db: Db, ip: string, lock = false): Promise<IpEntry | undefined> {
  const row = await db.get(lock
    ? sql<BanRow>`SELECT retry_until, strikes, banned_until FROM ip_ban_entries WHERE ip = ${ip} FOR UPDATE`
    : sql<BanRow>`SELECT retry_until, strikes, banned_until FROM ip_ban_entries WHERE ip = ${ip}`);
  return row === undefined ? undefined : entryOf(row);
}

export async function writeIpEntry(db: Db, ip: string, entry: IpEntry): Promise<void> {
  await db.run(sql`UPDATE ip_ban_entries SET retry_until = ${entry.retryUntil}, strikes = ${entry.strikes}::bigint[], banned_until = ${entry.bannedUntil}
    WHERE ip = ${ip}`);
}

/** A new entry retrying until `until`, or the later of the two times on an existing one. */
export async function noteRetryUntil(db: Db, ip: string, until: number): Promise<void> {
  await db.run(sql`INSERT INTO ip_ban_entries AS e (ip, retry_until, strikes, banned_until) VALUES (${ip}, ${until}, '{}', 0)
    ON CONFLICT (ip) DO UPDATE SET retry_until = greatest(e.retry_until, EXCLUDED.retry_until)`);
}

export async function countLimiterRows(db: Db): Promise<{ buckets: number; addresses: number }> {
  return (await db.get(sql<{ buckets: number; addresses: number }>`SELECT
    (SELECT count(*) FROM rate_limit_buckets) AS buckets, (SELECT count(*) FROM ip_ban_entries) AS addresses`))!;
}
