// The telemetry query limiter on PostgreSQL (sql/pg/0010_shared_limits.sql): buckets and bans in the database, shared
// by every node on it, with the rules of the in-memory store applied to the rows (chargeBucket, admitEntry), so the
// figures are the same to the unit. A charge reads its bucket's row, applies chargeBucket, and writes the result back
// only if the row is still what it read (compare and set: an UPDATE conditioned on the row's old state, or an INSERT
// that finds no row): when another node charged, swept or created the bucket in between, nothing is written and the
// charge starts again from the new row. So charges of one bucket take effect one after the other, as under a lock —
// the admitted total over any window is at most capacity + leak rate × window, whatever node takes each request.
//
// Cost: a charge is 2 round trips (read, conditional write; a refused one only the read), where a transaction holding
// the row's lock took 4 (BEGIN, lock-and-read, write, COMMIT); measured in bench/rate-limit.mjs. An address with
// nothing against it — almost every request — costs one indexed read. The usual query needs neither read
// (admitAndCharge): when the bucket's row is still the one this node wrote last, the conditional write compares with
// that row and with the address having no row, in one statement, one round trip; when another node wrote since,
// nothing is written and the request goes the long way.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { admitEntry, type Ban, type IpEntry } from './ip-bans.ts';
import { chargeBucket, readingAt, type Bucket, type BucketKey } from './leaky-bucket.ts';
import type { RateLimiter } from './limiter.ts';
import { LruCache } from '../lib/lru-cache.ts';

/** How often a node deletes idle rows (as the in-memory store sweeps). */
const SWEEP_EVERY_MS = 60_000;
/** buckets whose last written row a node remembers */
const WRITTEN_KEPT = 10_000;

interface BucketRow { level: number; at: number; drained_at: number }
interface BanRow { retry_until: number; strikes: Array<number | string>; banned_until: number }

const bucketOf = (r: BucketRow): Bucket => ({ level: r.level, at: r.at, drainedAt: r.drained_at });
const entryOf = (r: BanRow): IpEntry => ({ retryUntil: r.retry_until, strikes: r.strikes.map(Number), bannedUntil: r.banned_until });

export function sharedRateLimiter(db: Db): RateLimiter {
  let lastSweep = -Infinity;
  /** the bucket rows this node wrote last, by key (a hint: every write still compares with the row) */
  const written = new LruCache<number, Bucket>(WRITTEN_KEPT);

  /** Writes `after` if the bucket's row is still `before` (no row: undefined); whether it did. */
  async function compareAndSet(k: number, before: Bucket | undefined, after: Bucket): Promise<boolean> {
    const { changes } = await db.run(before === undefined
      ? sql`INSERT INTO rate_limit_buckets (key, level, at, drained_at) VALUES (${k}, ${after.level}, ${after.at}, ${after.drainedAt})
          ON CONFLICT (key) DO NOTHING`
      : sql`UPDATE rate_limit_buckets SET level = ${after.level}, at = ${after.at}, drained_at = ${after.drainedAt}
          WHERE key = ${k} AND level = ${before.level} AND at = ${before.at} AND drained_at = ${before.drainedAt}`);
    if (changes === 1) written.set(k, after);
    return changes === 1;
  }
  /** deletes the rows that hold nothing any more, at most once a minute per node */
  async function maybeSweep(now: number): Promise<void> {
    if (now - lastSweep < SWEEP_EVERY_MS && now >= lastSweep) return;
    lastSweep = now;
    await db.run(sql`DELETE FROM rate_limit_buckets WHERE drained_at <= ${now}`);
    await db.run(sql`DELETE FROM ip_ban_entries WHERE banned_until <= ${now} AND retry_until <= ${now}
      AND (cardinality(strikes) = 0 OR strikes[cardinality(strikes)] <= ${now - 60_000})`);
  }

  const limiter: RateLimiter = {
    async peek(key, policy, now) {
      const row = await db.get(sql<BucketRow>`SELECT level, at, drained_at FROM rate_limit_buckets WHERE key = ${Number(key)}`);
      return readingAt(row === undefined ? undefined : bucketOf(row), policy, now);
    },

    async charge(key: BucketKey, policy, cost, now) {
      const k = Number(key);
      for (;;) {
        const row = await db.get(sql<BucketRow>`SELECT level, at, drained_at FROM rate_limit_buckets WHERE key = ${k}`);
        // no row: an empty bucket (chargeBucket's undefined)
        const { outcome, after } = chargeBucket(row === undefined ? undefined : bucketOf(row), policy, cost, now);
        if (after === undefined) return outcome;
        if (await compareAndSet(k, row === undefined ? undefined : bucketOf(row), after)) return outcome;
      }
    },

    async admitAndCharge(ip, key, policy, cost, now) {
      const k = Number(key);
      const mine = written.get(k);
      const charged = mine === undefined ? undefined : chargeBucket(mine, policy, cost, now);
      if (mine !== undefined && charged?.after !== undefined) {
        // The usual request in one round trip: nothing against the address (no row) and the bucket's row still the one
        // this node wrote last (when nobody charged it since: one node, or a user on one node). The write is
        // conditioned on both, in one snapshot; a refusal, or a row that moved on, goes the long way.
        await maybeSweep(now);
        const { outcome, after } = charged;
        const r = (await db.get(sql<{ against: number; changed: number }>`WITH ban AS (SELECT 1 FROM ip_ban_entries WHERE ip = ${ip}),
          charge AS (UPDATE rate_limit_buckets SET level = ${after.level}, at = ${after.at}, drained_at = ${after.drainedAt}
            WHERE key = ${k} AND level = ${mine.level} AND at = ${mine.at} AND drained_at = ${mine.drainedAt} AND NOT EXISTS (SELECT 1 FROM ban)
            RETURNING 1)
          SELECT (SELECT count(*) FROM ban)::integer AS against, (SELECT count(*) FROM charge)::integer AS changed`))!;
        if (r.changed === 1) {
          written.set(k, after);
          return { outcome };
        }
        written.delete(k);
        // nothing against the address: admitted as admit would (it changes nothing then); the charge goes the long way
        if (r.against === 0) return { outcome: await limiter.charge(key, policy, cost, now) };
      }
      const ban = await limiter.admit(ip, now);
      return ban === undefined ? { outcome: await limiter.charge(key, policy, cost, now) } : { ban };
    },

    async admit(ip, now): Promise<Ban | undefined> {
      await maybeSweep(now);
      const seen = await db.get(sql<BanRow>`SELECT retry_until, strikes, banned_until FROM ip_ban_entries WHERE ip = ${ip}`);
      // nothing against the address, or a ban in force: admitEntry would change nothing that matters
      if (seen === undefined || (seen.banned_until <= now && now >= seen.retry_until)) return undefined;
      if (seen.banned_until > now) return { msLeft: seen.banned_until - now, started: false };
      // a strike: counted under the row's lock
      return db.tx(async (tx) => {
        const row = await tx.get(sql<BanRow>`SELECT retry_until, strikes, banned_until FROM ip_ban_entries WHERE ip = ${ip} FOR UPDATE`);
        if (row === undefined) return undefined;
        const entry = entryOf(row);
        const ban = admitEntry(entry, now);
        await tx.run(sql`UPDATE ip_ban_entries SET retry_until = ${entry.retryUntil}, strikes = ${entry.strikes}::bigint[], banned_until = ${entry.bannedUntil}
          WHERE ip = ${ip}`);
        return ban;
      });
    },

    async noteRetryAfter(ip, retryAfterSeconds, now) {
      // retryEntry's rule in one statement: a new entry, or the later of the two Retry-Afters
      const until = now + retryAfterSeconds * 1000;
      await db.run(sql`INSERT INTO ip_ban_entries AS e (ip, retry_until, strikes, banned_until) VALUES (${ip}, ${until}, '{}', 0)
        ON CONFLICT (ip) DO UPDATE SET retry_until = greatest(e.retry_until, EXCLUDED.retry_until)`);
    },

    async size() {
      const row = await db.get(sql<{ buckets: number; addresses: number }>`SELECT
        (SELECT count(*) FROM rate_limit_buckets) AS buckets, (SELECT count(*) FROM ip_ban_entries) AS addresses`);
      return row!;
    },
  };
  return limiter;
}
