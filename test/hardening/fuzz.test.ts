// Hostile input across every route: 50,000 seeded malformed or adversarial requests. Zero 5xx, every error in
// the contract's shape, and memory bounded. Reproduce a failure with FUZZ_SEED=<seed printed in the failure>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { makeTestApp } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { requestFor, type FuzzRequest } from './fuzz-requests.ts';
import { createApp } from '../../src/boot/app.ts';

// The SQLite pass sends all 50,000; the PostgreSQL pass (whose requests each wait on the server sharing the machine's
// cores) the first 20,000 of the same seeded sequence, to keep the suite in its time budget.
const RUNS = Number(process.env.FUZZ_RUNS ?? (testBackend() === 'postgres' ? 20_000 : 50_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
/** the InfluxDB 1.x endpoints: errors in InfluxDB's shape { error } */
const INFLUX_ROUTES = /^[A-Z]+ \/(ping|write|query)$/;

test(`${RUNS} hostile requests across every route: no 5xx, every error in the contract's shape`, async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const { api } = createApp(app.deps);
  const specs = api.specs;
  assert.ok(specs.length >= 10, 'the route registry lists the routes');
  const user = await app.createUser('fuzz-user@test');
  void user.token;
  // Tokens are re-minted every 4 minutes of fake time: the clock advances with every request, and an expired token
  // would turn the rest of the run into 401s that never reach the handlers.
  let minted = -Infinity;
  const tokens: Record<FuzzRequest['as'], string | undefined> = {
    admin: undefined, user: undefined, none: undefined, garbage: 'eyJhbGciOiJub25lIn0.eyJ0eXAiOiJhY2Nlc3MiLCJzdWIiOiIxIn0.',
  };
  const refreshTokens = async () => {
    if (app.clock.now() - minted < 4 * 60_000) return;
    minted = app.clock.now();
    tokens.admin = await app.token(app.adminId, 'sudo');
    tokens.user = await app.token(user.id);
  };
  const perRoute = new Map<string, Map<number, number>>();
  const doc = (await app.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
  const bodySchemaOf = (method: string, path: string) =>
    doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method]?.requestBody?.content?.['application/json']?.schema as Record<string, unknown> | undefined;
  const querySchemasOf = (method: string, path: string) => Object.fromEntries(
    ((doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method]?.parameters ?? []) as { name: string; in: string; schema: Record<string, unknown> }[])
      .filter((p) => p.in === 'query').map((p) => [p.name, p.schema]));
  const arb = fc.oneof(...specs.map((s) => requestFor(s, bodySchemaOf(s.method, s.path), querySchemasOf(s.method, s.path))));
  let sent = 0;
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  await fc.assert(fc.asyncProperty(arb, async (req) => {
    sent++;
    await refreshTokens();
    const res = await app.request(req.method, req.path, {
      token: tokens[req.as],
      headers: req.headers,
      ...(req.body !== undefined ? { raw: req.body } : {}),
    });
    const counts = perRoute.get(req.route) ?? new Map<number, number>();
    counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
    perRoute.set(req.route, counts);
    assert.ok(res.status < 500, `${req.method} ${req.path} -> ${res.status} ${res.text.slice(0, 300)}`);
    if (res.status >= 400 && INFLUX_ROUTES.test(req.route)) {
      // the InfluxDB 1.x door answers in InfluxDB's shape (issue 14)
      assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${req.route}: error is JSON`);
      assert.deepEqual(Object.keys(res.body), ['error'], `${req.route}: { error }`);
      assert.equal(typeof res.body.error, 'string');
      assert.doesNotMatch(res.text, /at .+\.(ts|js):\d+|SqliteError|SQLITE_/, `${req.route}: no internals leak`);
    } else if (res.status >= 400) {
      assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${req.route}: error is JSON`);
      assert.equal(res.body.statusCode, res.status, `${req.route}: statusCode`);
      assert.equal(typeof res.body.error, 'string');
      assert.equal(typeof res.body.message, 'string');
      assert.match(res.body.code, /^[A-Z_]+$/);
      assert.doesNotMatch(res.text, /at .+\.(ts|js):\d+|SqliteError|SQLITE_/, `${req.route}: no internals leak`);
    }
    // a long run keeps the fake clock moving so throttles and buckets drain as they would in real time
    app.clock.advance(997);
  }), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  assert.equal(sent, RUNS);
  // every route was exercised, and the fuzzer reached past validation somewhere (not only 400s)
  const routes = specs.map((s) => `${s.method.toUpperCase()} ${s.path}`);
  for (const r of routes) assert.ok(perRoute.has(r), `route ${r} was fuzzed`);
  const statuses = new Set([...perRoute.values()].flatMap((m) => [...m.keys()]));
  for (const s of [200, 400, 401, 404]) assert.ok(statuses.has(s), `saw status ${s}`);
  collectGarbage();
  const grownMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  assert.ok(grownMb < 300, `heap grew ${grownMb.toFixed(0)} MB`);
  if (process.env.FUZZ_REPORT) {
    for (const [route, counts] of [...perRoute].sort()) console.log(route, JSON.stringify(Object.fromEntries(counts)));
  }
});

/**
 * A full garbage collection, so the heap check measures what the app keeps, not garbage a collection had not reached
 * yet (the tests run without --expose-gc: the function is obtained from V8 at run time).
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
