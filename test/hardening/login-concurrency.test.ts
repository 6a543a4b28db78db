// Logins in parallel against the executable. The throttles count an attempt from before its password is checked
// (so parallel guesses cannot overshoot a limit); correct logins running at the same time must not be refused for
// it: the contract refuses after 5 failures for a user and 20 from one IP, and none of these failed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, dropDatabases, envInt, loginOver, startGridkeeper } from '../support/harness.ts';

// 30: past the per-IP limit of 20 in flight; each account costs a real scrypt hash to create and one to log in (~93 ms)
const USERS = envInt('LOGIN_USERS', 30);

let dir: string;
let run: RunningBinary;
let http: HttpClient;

before(async () => {
  const bin = isolatedBinary();
  dir = bin.dir;
  run = await startGridkeeper(bin.exe, join(dir, 'data'));
  http = httpClient(run.url, { maxSockets: 128 });
  const admin = await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD);
  for (let i = 0; i < USERS; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, USERS - i) }, async (_, j) => {
      const r = await http.request('PUT', `/v1/role/1/member?userEmail=parallel-${i + j}@login.test&password=parallel-password-${i + j}`, { token: admin.access, body: {} });
      assert.equal(r.status, 200, r.text);
    }));
  }
});

after(async () => {
  http?.close();
  try {
    if (run) assert.equal(await run.stop(), 0);
  } finally {
    await dropDatabases();
  }
  rmSync(dir, { recursive: true, force: true });
});

const login = (username: string, password: string) => http.request('POST', '/auth/login', { body: { username, password }, timeoutMs: 60_000 });
const tally = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});

describe('parallel logins from one address', () => {
  it(`${USERS} users logging in at once (over the per-IP limit of 20 in flight): all succeed`, { timeout: 120_000 }, async () => {
    const rs = await Promise.all(Array.from({ length: USERS }, (_, i) => login(`parallel-${i}@login.test`, `parallel-password-${i}`)));
    assert.deepEqual(tally(rs), { 200: USERS });
  });

  it('one user logging in 12 times at once (over the per-user limit of 5): all succeed', { timeout: 60_000 }, async () => {
    const rs = await Promise.all(Array.from({ length: 12 }, () => login('parallel-0@login.test', 'parallel-password-0')));
    assert.deepEqual(tally(rs), { 200: 12 });
  });

  it('parallel guesses still stop at the limit: 5 wrong answers, the rest 429, and then the right password is refused', { timeout: 60_000 }, async () => {
    const t0 = performance.now();
    const rs = await Promise.all(Array.from({ length: 15 }, () => login('parallel-1@login.test', 'a-wrong-password')));
    assert.deepEqual(tally(rs), { 401: 5, 429: 10 });
    // A refused guess waits only for checks that hold a reservation, not for the other refused ones deciding again:
    // those passed the turn between them until the 10 s bound on waiting ran out (all answered in ~0.5 s here).
    const took = performance.now() - t0;
    assert.ok(took < 5_000, `the guesses were answered after ${Math.round(took)} ms: the refused ones waited for each other`);
    const right = await login('parallel-1@login.test', 'parallel-password-1');
    assert.equal(right.status, 429);
    assert.equal(right.body.code, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    // the others are not locked out by it
    assert.equal((await login('parallel-2@login.test', 'parallel-password-2')).status, 200);
  });
});
