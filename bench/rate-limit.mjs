// Issue 8 figures: what charging a telemetry query costs, with many users' buckets in memory.
//   Run: node --import ./test/support/register.mjs bench/rate-limit.mjs   (USERS=100000 ROUNDS=5 to change the sizes)
// 1. LeakyBuckets.charge alone (key included) on a map of USERS buckets, users in random order, the clock moving 1 ms
//    every 16 charges (1M charges = 62.5 s: the map stays full, buckets leak, fill, refuse, and the lazy sweep runs).
// 2. IpBans.admit for an address with state (the per-request ban check).
// 3. enforceQueryCost as the query route calls it: ban check, tier lookup (one SQLite read), charge, five headers.
// 4. The same on PostgreSQL, where the buckets and bans are shared by every node (shared-limits.ts): one caller, then
//    16 at once (NO_PG=1 skips it; the server at GRIDKEEPER_TEST_DATABASE_URL, default this machine's).
// Reports the median of ROUNDS rounds in µs per call.
import { LeakyBuckets } from '../src/rate-limit/leaky-bucket.ts';
import { IpBans } from '../src/rate-limit/ip-bans.ts';
import { bucketKey } from '../src/rate-limit/rate-limiter.ts';
import { TIERS } from '../src/rate-limit/tiers.ts';
import { enforceQueryCost } from '../src/rate-limit/query-cost.ts';
import { openDatabase } from '../src/db/open.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { benchDatabase } from './lib/postgres.mjs';
import { sql } from 'kysely';
import { createDeps } from '../src/boot/runtime.ts';
import { parseConfig } from '../src/lib/config.ts';
import { createLogger } from '../src/lib/logger.ts';

const USERS = Number(process.env.USERS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CALLS = 1_000_000;
const T0 = Date.UTC(2026, 0, 1);
const tiers = [TIERS.free, TIERS.basic, TIERS.premium];

// xorshift32: reproducible user order without Math.random
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** body may be async (the admission step awaits its tier lookup): its promise is awaited inside the timed span. */
async function timeRounds(label, calls, setup, body) {
  const perCall = [];
  for (let r = 0; r < ROUNDS + 1; r++) { // the first round warms the JIT and is not counted
    const state = setup(r);
    const t0 = process.hrtime.bigint();
    const result = await body(state, calls);
    const ns = Number(process.hrtime.bigint() - t0);
    if (r > 0) perCall.push(ns / calls / 1000);
    if (r === ROUNDS) console.log(`${label.padEnd(58)} ${median(perCall).toFixed(3).padStart(7)} µs/call  (${result})`);
  }
}

console.log(`node ${process.version}, ${USERS.toLocaleString('en')} users, median of ${ROUNDS} rounds`);

await timeRounds(`charge (LeakyBuckets, ${USERS.toLocaleString('en')} buckets in the map)`, CALLS, (r) => {
  const buckets = new LeakyBuckets({ maxEntries: USERS * 4 });
  let now = T0;
  for (let u = 0; u < USERS; u++) buckets.charge(bucketKey(u, tiers[u % 3].name), tiers[u % 3], 1 + (u % 50), now++);
  return { buckets, now, next: rng(r + 1) };
}, (s, calls) => {
  let admitted = 0;
  for (let i = 0; i < calls; i++) {
    const u = s.next() % USERS;
    const policy = tiers[u % 3];
    if (s.buckets.charge(bucketKey(u, policy.name), policy, 2 + (i % 40), s.now + (i >> 4)).ok) admitted++;
  }
  return `${(100 * admitted / calls).toFixed(0)}% admitted, ${s.buckets.size.toLocaleString('en')} buckets at the end`;
});

await timeRounds('IP ban check (IpBans.admit, 10,000 addresses with state)', CALLS, () => {
  const bans = new IpBans();
  for (let i = 0; i < 10_000; i++) bans.noteRetryAfter(`10.0.${i >> 8}.${i & 255}`, 1, T0);
  return { bans, now: T0 + 5_000, next: rng(7) };
}, (s, calls) => {
  let banned = 0;
  for (let i = 0; i < calls; i++) {
    const i2 = s.next() % 20_000; // half of them have state, half never did
    if (s.bans.admit(`10.0.${i2 >> 8}.${i2 & 255}`, s.now) !== undefined) banned++;
  }
  return `${banned} banned`;
});

// The whole per-request step on a minimal stand-in for Hono's context.
const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: 'bench-password-1', GRIDKEEPER_LOG: 'error' }, []);
const db = openDatabase({ file: ':memory:' });
let clock = T0;
const { deps } = await createDeps({ config, db, now: () => clock, log: createLogger('error') });
const insert = db.sqlite.prepare("INSERT INTO users (email, password_hash, password_changed_at, created_at, tier) VALUES (?, 'x', 0, 0, ?)");
const ids = db.sqlite.transaction(() => Array.from({ length: 10_000 }, (_, i) => Number(insert.run(`u${i}@example.com`, tiers[i % 3].name).lastInsertRowid)))();
const headers = new Map();
const ctx = {
  var: { actor: { userId: ids[0] } },
  env: { incoming: { socket: { remoteAddress: '192.0.2.1' } } },
  req: { header: () => undefined },
  get: () => 'bench',
  header: (k, v) => headers.set(k, v),
};
const estimate = { cost: 3, estimatedDatapoints: 100, scannedShards: 0 };
await timeRounds('enforceQueryCost (ban check + tier lookup + charge + headers)', 200_000, () => ({ next: rng(3) }), async (s, calls) => {
  let refused = 0;
  for (let i = 0; i < calls; i++) {
    ctx.var.actor.userId = ids[s.next() % ids.length];
    clock += 1;
    try { await enforceQueryCost(ctx, deps, estimate, {}); } catch { refused++; }
  }
  return `${refused} refused`;
});
await db.close();

if (!process.env.NO_PG) {
  const server = await benchDatabase('gk_bench_rate_limit');
  const pgDb = openPostgres({ url: server.url, poolSize: 16 });
  try {
    await migrate(pgDb, T0);
    const { deps: pgDeps } = await createDeps({ config, db: pgDb, now: () => clock, log: createLogger('error') });
    const rows = await pgDb.all(sql`INSERT INTO users (email, password_hash, password_changed_at, created_at, tier)
      SELECT 'u' || i || '@example.com', 'x', 0, 0, (ARRAY['free', 'basic', 'premium'])[1 + i % 3] FROM generate_series(0, 9999) AS i RETURNING id`);
    const pgIds = rows.map((r) => r.id);
    const step = async (s) => {
      const c = { ...ctx, var: { actor: { userId: pgIds[s.next() % pgIds.length] } } };
      clock += 1;
      try { await enforceQueryCost(c, pgDeps, estimate, {}); return 0; } catch { return 1; }
    };
    await timeRounds('PostgreSQL, shared buckets: enforceQueryCost, one caller', 2_000, () => ({ next: rng(3) }), async (s, calls) => {
      let refused = 0;
      for (let i = 0; i < calls; i++) refused += await step(s);
      return `${refused} refused`;
    });
    await timeRounds('PostgreSQL, shared buckets: enforceQueryCost, 16 callers at once', 4_000, () => ({ next: rng(5) }), async (s, calls) => {
      let refused = 0;
      const worker = async () => { for (let i = 0; i < calls / 16; i++) refused += await step(s); };
      await Promise.all(Array.from({ length: 16 }, worker));
      return `${refused} refused (wall time per call)`;
    });
  } finally {
    await pgDb.close();
    await server.drop();
  }
}
