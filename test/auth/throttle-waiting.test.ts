// reserveAttemptWaiting under a crowd of correct secrets: more checks at once than a key's limit, each releasing its
// reservation when done. None may be refused; only failures count against a limit (docs/api.md#throttles). Random
// check lengths and many rounds, so that reservations taken in the same unit of work as another's refusal, or just
// before it, come up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeTestApp } from '../support/app.ts';
import { ApiError } from '../../src/http/errors.ts';
import { releaseAttempt, reserveAttemptWaiting, RULES } from '../../src/auth/throttle.ts';

test('checks of correct secrets past a limit all pass, waiting for each other instead of being refused', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const { db } = app.deps;
  let round = 0;
  await fc.assert(fc.asyncProperty(
    fc.array(fc.integer({ min: 0, max: 4 }), { minLength: RULES.passwordPerIp.limit + 5, maxLength: 3 * RULES.passwordPerIp.limit }),
    async (checkMs) => {
      // a fresh address each round: nothing is left of the others
      const ip = `ip-${round++}`;
      const outcomes = await Promise.all(checkMs.map(async (ms, i) => {
        const keys = [{ rule: RULES.passwordPerUser, subject: `user-${i}` }, { rule: RULES.passwordPerIp, subject: ip }];
        try {
          const attempt = await reserveAttemptWaiting(db, keys, 'TOO_MANY_FAILED_PASSWORD_CHECKS', app.clock.now);
          try {
            await new Promise((r) => (ms === 0 ? setImmediate(r) : setTimeout(r, ms)));
            await db.write((tx) => releaseAttempt(tx, attempt));
          } finally {
            attempt.settle();
          }
          return 'passed';
        } catch (err) {
          if (err instanceof ApiError) return `${err.status} ${err.code}`;
          throw err;
        }
      }));
      assert.deepEqual(outcomes.filter((o) => o !== 'passed'), [], `${checkMs.length} checks at once`);
    },
  ), { numRuns: 40, seed: 20261130 });
});
