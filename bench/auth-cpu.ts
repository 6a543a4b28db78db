// In-process part of bench/auth.mjs (run through the test loader; prints one JSON line):
//  - CPU µs per access-token check as a request pays it: verifyToken (signature + claims, or a cache hit) plus the
//    session guard's revocation lookup — cold (every token new: full Ed25519 verification) and warm (cache hit);
//  - login latency for a wrong password of a known user vs an unknown user (timing parity, scrypt both ways).
import { openDatabase } from '../src/db/open.ts';
import { createDeps } from '../src/boot/runtime.ts';
import { parseConfig } from '../src/lib/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createApp } from '../src/boot/app.ts';
import { signToken, verifyToken } from '../src/auth/tokens.ts';
import { openSession } from '../src/auth/sessions.ts';
import { hashSecret } from '../src/auth/passwords.ts';

const COLD = Number(process.env.COLD ?? 3000);
const WARM = Number(process.env.WARM ?? 200000);
const LOGINS = Number(process.env.LOGINS ?? 20);

let now = Date.UTC(2026, 0, 1);
const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: 'bench-password-1', GRIDKEEPER_LOG: 'error' }, []);
const db = openDatabase({ file: ':memory:' });
const { deps } = await createDeps({ config, db, now: () => now, log: createLogger('error') });
const sid = await openSession(db, 1, now);

const cpuUs = (from: NodeJS.CpuUsage) => { const d = process.cpuUsage(from); return d.user + d.system; };

async function check(token: string): Promise<void> {
  const claims = await verifyToken(deps.keys, token, ['access', 'sudo'], now);
  if (await deps.sessions.liveUser(claims) === undefined) throw new Error('revoked?');
}

// cold: distinct tokens, so every check is a full signature verification (more than the cache holds, so none hit)
const tokens: string[] = [];
for (let i = 0; i < COLD; i++) tokens.push((await signToken(deps.keys, { typ: 'access', sub: 1, sid }, now)).token);
for (const t of tokens.slice(0, 200)) await check(t); // JIT warm-up (these become cache hits below, so skip them)
let c0 = process.cpuUsage();
for (const t of tokens.slice(200)) await check(t);
const coldUs = cpuUs(c0) / (COLD - 200);

// warm: one token, as a client reusing its access token for ten minutes
const token = tokens[tokens.length - 1];
for (let i = 0; i < 5000; i++) await check(token);
c0 = process.cpuUsage();
for (let i = 0; i < WARM; i++) await check(token);
const warmUs = cpuUs(c0) / WARM;

// the revocation lookup alone
const claims = await verifyToken(deps.keys, token, ['access'], now);
c0 = process.cpuUsage();
for (let i = 0; i < WARM; i++) await deps.sessions.liveUser(claims);
const guardUs = cpuUs(c0) / WARM;

// login timing parity: known user + wrong password vs unknown user; distinct users and client addresses (no throttle)
const { app } = createApp(deps);
const hash = await hashSecret('the-right-password-1');
for (let i = 0; i < LOGINS; i++) {
  await db.run(db.qb.insertInto('users').values({ email: `known${i}@bench`, password_hash: hash, password_changed_at: now, created_at: now }));
}
async function loginMs(username: string, ip: string): Promise<number> {
  const t0 = performance.now();
  const res = await app.request('/auth/login', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: 'a-wrong-password' }),
  }, { incoming: { socket: { remoteAddress: ip } } });
  await res.text();
  if (res.status !== 401) throw new Error(`login: ${res.status}`);
  return performance.now() - t0;
}
const known: number[] = [];
const unknown: number[] = [];
for (let i = 0; i < LOGINS; i++) {
  // interleaved, so drift affects both alike
  known.push(await loginMs(`known${i}@bench`, `10.1.0.${i}`));
  unknown.push(await loginMs(`ghost${i}@bench`, `10.2.0.${i}`));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

process.stdout.write(JSON.stringify({
  coldUs, warmUs, guardUs,
  loginKnownWrongMs: median(known), loginUnknownMs: median(unknown),
}) + '\n');
await db.close();
