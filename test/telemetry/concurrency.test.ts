// Concurrent telemetry writes, on both backends: requests that create the same namespace, measurements, fields and
// shards at the same moment, and requests that re-write the same points. On SQLite they queue on one connection; on
// PostgreSQL they run at once (the catalogue under the namespace's advisory lock, points in key order). Either way
// every request is answered 204 or a 4xx that names its own mistake, never a 5xx, and the store ends consistent:
// field numbers distinct per measurement, one catalogue row per series, every acknowledged point readable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, T0 } from '../support/app.ts';
import { FROM_V1, countRows, ns, queryOk, write, writer } from './fixtures.ts';

const N = 20;

describe('telemetry write: concurrency', () => {
  it(`${N} writers create one new namespace, shared measurements, new fields and shards at once: all 204, nothing lost`, async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const nodes = Array.from({ length: N }, (_, i) => `c${i}`);
    const u = await writer(app, ...nodes);
    // writer i: measurement power (shared) with a field of its own and a shared one, in two shard windows
    const bodies = nodes.map((n, i) => [
      `power,nodeId=${n} shared=${i}.5,own${i}=${i}i ${ns(T0 - 1000)}`,
      `power,nodeId=${n},phase=L${i % 3} shared=${i}.25 ${ns(T0 - 2 * 86_400_000)}`,
      `state,nodeId=${n} on=${i % 2 === 0} ${ns(T0 - 1000)}`,
    ].join('\n'));
    const answers = await Promise.all(bodies.map((b) => write(app, u.token, b)));
    for (const r of answers) assert.equal(r.status, 204, r.text);

    const db = app.deps.db;
    const fields = await db.all(sql<{ measurement: string; field: string; ordinal: number }>`SELECT measurement, field, ordinal FROM telemetry_fields
      ORDER BY measurement, ordinal`);
    const power = fields.filter((f) => f.measurement === 'power');
    assert.equal(power.length, N + 1, 'shared plus one own field per writer');
    assert.deepEqual(power.map((f) => f.ordinal), power.map((_, i) => i), 'field numbers 0..N, each once');
    assert.deepEqual(fields.filter((f) => f.measurement === 'state').map((f) => f.field), ['on']);
    assert.equal(await countRows(app, 'telemetry_namespaces'), 1);
    assert.equal(await countRows(app, 'telemetry_series'), 3 * N);
    assert.equal(await countRows(app, 'telemetry_shards'), 2);

    for (const [i, n] of nodes.entries()) {
      const body = await queryOk(app, u.token, {
        select: ['shared', `own${i}`], from: FROM_V1, where: { tags: { nodeId: n }, time: [{ operator: '>=', value: T0 - 3 * 86_400_000 }] },
      });
      const rows = body.series.flatMap((s: { values: unknown[][] }) => s.values.map((v) => v.slice(1)));
      assert.deepEqual(rows.sort(), [[i + 0.25, null], [i + 0.5, i]].sort(), `points of ${n}`);
    }
  });

  it(`${N} writers re-write the same points at once: all 204, and each point holds one writer's values whole`, async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1', 'n2');
    // every writer writes the same 200 keys (2 series x 100 times), with its own number in both fields
    const body = (w: number) => Array.from({ length: 100 }, (_, k) => ['n1', 'n2'].map((n) => `power,nodeId=${n} a=${w},b=${w}i ${ns(T0 - 100_000 + k * 1000)}`).join('\n')).join('\n');
    const answers = await Promise.all(Array.from({ length: N }, (_, w) => write(app, u.token, body(w))));
    for (const r of answers) assert.equal(r.status, 204, r.text);
    for (const n of ['n1', 'n2']) {
      const got = await queryOk(app, u.token, { select: ['a', 'b'], from: FROM_V1, where: { tags: { nodeId: n }, time: [{ operator: '>=', value: T0 - 200_000 }] } });
      const rows = got.series[0].values as unknown[][];
      assert.equal(rows.length, 100);
      // a request is one transaction: a point never mixes two writers' fields
      for (const r of rows) assert.equal(r[1], r[2], `a and b of one point come from one writer: ${JSON.stringify(r)}`);
    }
  });

  it('two writers give a new field two types at once: one 204, one 400 naming the conflict, one type stored', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    for (let round = 0; round < 5; round++) {
      const field = `x${round}`;
      const [a, b] = await Promise.all([
        write(app, u.token, `power,nodeId=n1 ${field}=1.5 ${ns(T0 - 1000)}`),
        write(app, u.token, `power,nodeId=n1 ${field}="text" ${ns(T0 - 2000)}`),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [204, 400], `${a.text} ${b.text}`);
      const refused = a.status === 400 ? a : b;
      assert.equal(refused.body.code, 'LINE_PROTOCOL');
      assert.match(refused.body.message, new RegExp(`field type conflict: "${field}"`));
      const stored = await app.deps.db.all(sql<{ type: string }>`SELECT type FROM telemetry_fields WHERE field = ${field}`);
      assert.deepEqual(stored.map((s) => s.type), [a.status === 204 ? 'float' : 'string']);
    }
  });
});
