// The telemetry query limiter on PostgreSQL (sql/pg/0010_shared_limits.sql): buckets and bans in the database, shared
// by every node on it, with the rules of the in-memory store applied to the rows (chargeBucket, admitEntry), so the
// figures are the same to the unit. A charge reads its bucket's row, applies chargeBucket, and writes the result back
// only if the row is still what it read (compare and set: an UPDATE conditioned on the row's old state, or an INSERT
// that finds no row): when another node charged, swept or created the bucket in between, nothing is written and the
// charge starts again from the new row. So charges of one bucket take effect one after the other, as under a lock —
// the admitted total over any window is at most capacity + leak rate × window, whatever node takes each request.
//
// Cost: a charge is 2 round trips (read, conditional write; a refused one only the read), where a transaction holding
// the row's lock would take 4 (BEGIN, lock-and-read, write, COMMIT). An address with
// nothing against it — almost every request — costs one indexed read. The usual query needs neither read
// (admitAndCharge): when the bucket's row is still the one this node wrote last, the conditional write compares with
// that row and with the address having no row, in one statement, one round trip; when another node wrote since,
// nothing is written and the request goes the long way.
import type { Db } from '../db/open.ts';
import { admitEntry, type Ban } from './ip-bans.ts';
import { chargeBucket, readingAt, type Bucket, type BucketKey } from './leaky-bucket.ts';
import {
  chargeIfClear, compareAndSetBucket, countLimiterRows, deleteIdleRows, noteRetryUntil, readBucket, readIpEntry, writeIpEntry,
} from './shared-limits.store.ts';
import type { RateLimiter } from './limiter.ts';
import { LruCache } from '../lib/lru-cache.ts';

/** How often a node deletes idle rows (as the in-memory store sweeps). */
const SWEEP_EVERY_MS = 60_000;
/** buckets whose last written row a node remembers */
const WRITTEN_KEPT = 10_000;

export function sharedRateLimiter(db: Db): RateLimiter {
  let lastSweep = -Infinity;
  /** the bucket rows this node wrote last, by key (a hint: every write still compares with the row) */
  const written = new LruCache<number, Bucket>(WRITTEN_KEPT);

  /** Writes `after` if the bucket's row is still `before` (no row: undefined); whether it did. */
  async function compareAndSet(k: number, before: Bucket | undefined, after: Bucket): Promise<boolean> {
    const set = await compareAndSetBucket(db, k, before, after);
    if (set) written.set(k, after);
    return set;
  }
  /** deletes the rows that hold nothing any more, at most once a minute per node */
  async function maybeSweep(now: number): Promise<void> {
    if (now - lastSweep < SWEEP_EVERY_MS && now >= lastSweep) return;
    lastSweep = now;
    await deleteIdleRows(db, now);
  }

  const limiter: RateLimiter = {
    async peek(key, policy, now) {
      return readingAt(await readBucket(db, Number(key)), policy, now);
    },

    async charge(key: BucketKey, policy, cost, now) {
      const k = Number(key);
      for (;;) {
        // no row: an empty bucket (chargeBucket's undefined)
        const before = await readBucket(db, k);
        const { outcome, after } = chargeBucket(before, policy, cost, now);
        if (after === undefined) return outcome;
        if (await compareAndSet(k, before, after)) return outcome;
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
        const r = await chargeIfClear(db, ip, k, mine, after);
        if (r.changed) {
          written.set(k, after);
          return { outcome };
        }
        written.delete(k);
        // nothing against the address: admitted as admit would (it changes nothing then); the charge goes the long way
        if (!r.against) return { outcome: await limiter.charge(key, policy, cost, now) };
      }
      const ban = await limiter.admit(ip, now);
      return ban === undefined ? { outcome: await limiter.charge(key, policy, cost, now) } : { ban };
    },

    async admit(ip, now): Promise<Ban | undefined> {
      await maybeSweep(now);
      const seen = await readIpEntry(db, ip);
      // nothing against the address, or a ban in force: admitEntry would change nothing that matters
      if (seen === undefined || (seen.bannedUntil <= now && now >= seen.retryUntil)) return undefined;
      if (seen.bannedUntil > now) return { msLeft: seen.bannedUntil - now, started: false };
      // a strike: counted under the row's lock
      return db.tx(async (tx) => {
        const entry = await readIpEntry(tx, ip, true);
        if (entry === undefined) return undefined;
        const ban = admitEntry(entry, now);
        await writeIpEntry(tx, ip, entry);
        return ban;
      });
    },

    async noteRetryAfter(ip, retryAfterSeconds, now) {
      // retryEntry's rule in one statement: a new entry, or the later of the two Retry-Afters
      await noteRetryUntil(db, ip, now + retryAfterSeconds * 1000);
    },

    async size() {
      return countLimiterRows(db);
    },
  };
  return limiter;
}
