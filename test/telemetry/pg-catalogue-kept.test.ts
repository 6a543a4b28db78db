// Catalogue rows kept between requests on PostgreSQL (src/telemetry/pg/pg-reads.ts, under the version of
// sql/pg/0016_telemetry_catalogue_version.sql): what must hold is that a repeated query uses the kept rows, and that
// every change of the catalogue, made on any node or by a writer that knows nothing of the version (a node of the
// previous release, SQL by hand), is in the very next answer of every node: a new series, a new field, a new shard,
// a prune. Catalogue changes wait for each other on the version's row and never in a circle. A repeated query is one
// statement outside a transaction (reads.ts, inOneStatement) while the version and the staged batches it reads with
// its rows are the ones assumed.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, T0, threeNodes, type TestApp } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { pruneShards } from '../../src/telemetry/telemetry.store.ts';
import { FROM_V1, ns, queryOk, write, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const skip = testBackend() !== 'postgres' && 'PostgreSQL only (SQLite keeps its catalogue mirror in its one process: catalogue.ts)';

async function version(app: TestApp): Promise<number> {
  return (await app.deps.db.get(sql<{ version: number }>`SELECT version FROM telemetry_catalogue_version`))!.version;
}

/** Every series of node n1 in the last two days, with its points of `fields`: [tags, [[time, ...values]]]. */
async function pointsOf(app: TestApp, token: string, fields: string[] = ['p']): Promise<Array<[Record<string, string>, unknown[][]]>> {
  const body = await queryOk(app, token, { select: fields, from: FROM_V1,
    where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }, { operator: '<', value: T0 + DAY }] } });
  return (body.series ?? []).map((s: { tags: Record<string, string>; values: unknown[][] }) => [s.tags, s.values.map((v) => v.slice(1))]);
}

/** An app with one series of node n1 (phase=a, p=1 a second before T0), and its writer. */
async function appWithSeries(t: TestContext): Promise<{ app: TestApp; token: string }> {
  const app = await makeTestApp();
  t.after(() => app.close());
  const u = await writer(app, 'n1');
  await writeOk(app, u.token, `power,nodeId=n1,phase=a p=1 ${ns(T0 - 1000)}`);
  return { app, token: u.token };
}

/** Gives the series phase=b by hand with the catalogue version's trigger off (the version stays). */
async function retagBehindTheVersion(app: TestApp): Promise<void> {
  const db = app.deps.db;
  await db.script('ALTER TABLE telemetry_series DISABLE TRIGGER telemetry_series_changed');
  await db.run(sql`UPDATE telemetry_series SET tags = ${JSON.stringify({ nodeId: 'n1', phase: 'b' })}`);
  await db.script('ALTER TABLE telemetry_series ENABLE TRIGGER telemetry_series_changed');
}

/** Counts the read snapshots the app's database begins from now on (`count()`; `reset()` starts again at 0). */
function countSnapshots(t: TestContext, app: TestApp): { count(): number; reset(): void } {
  const db = app.deps.db;
  let snapshots = 0;
  const read = db.read;
  db.read = (fn) => { snapshots++; return read(fn); };
  t.after(() => { db.read = read; });
  return { count: () => snapshots, reset: () => { snapshots = 0; } };
}

describe('telemetry catalogue rows kept between requests on PostgreSQL', { skip }, () => {
  it('a repeated query uses the kept rows until the catalogue version changes', async (t) => {
    const { app, token } = await appWithSeries(t);
    assert.deepEqual(await pointsOf(app, token), [[{ nodeId: 'n1', phase: 'a' }, [[1]]]]);
    // the series' tags changed by hand with the version's trigger off: the kept list still answers
    await retagBehindTheVersion(app);
    assert.deepEqual(await pointsOf(app, token), [[{ nodeId: 'n1', phase: 'a' }, [[1]]]], 'answered from the kept rows');
    // a new version: the rows are read again
    await app.deps.db.run(sql`UPDATE telemetry_catalogue_version SET version = version + 1`);
    assert.deepEqual(await pointsOf(app, token), [[{ nodeId: 'n1', phase: 'b' }, [[1]]]]);
  });

  it('an InfluxQL query answers from the kept rows in both its snapshots until the catalogue version changes', async (t) => {
    const { app, token } = await appWithSeries(t);
    const tagsOf = async () => {
      const q = `SELECT p FROM power WHERE nodeId = 'n1' AND time >= ${T0 - DAY}ms GROUP BY phase`;
      const res = await app.request('GET', `/query?db=energy&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series.map((s: { tags: Record<string, string>; values: unknown[][] }) => [s.tags, s.values.map((v) => v[1])]);
    };
    assert.deepEqual(await tagsOf(), [[{ phase: 'a' }, [1]]]);
    // changed by hand with the version's trigger off: the rights-and-answer snapshot answers from the kept rows too
    await retagBehindTheVersion(app);
    const snapshots = countSnapshots(t, app);
    assert.deepEqual(await tagsOf(), [[{ phase: 'a' }, [1]]], 'answered from the kept rows');
    assert.equal(snapshots.count(), 1, 'planned on the kept rows, then one snapshot for rights and answer');
    await app.deps.db.run(sql`UPDATE telemetry_catalogue_version SET version = version + 1`);
    assert.deepEqual(await tagsOf(), [[{ phase: 'b' }, [1]]]);
  });

  it('a repeated query is one statement outside a transaction, answered as a read snapshot answers it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [1, 2, 3].map((p, k) => `power,nodeId=n1 p=${p},e=${10 * p}i ${ns(T0 - 3000 + k * 1000)}`).join('\n'));
    const last2 = { select: ['p', 'e'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, orderBy: 'DESC', limit: 2 };
    // one kind of read each: points, or statistics (of every field at once: a float and an integer column here)
    const mean = { select: [{ field: 'p', function: 'mean' }, { field: 'e', function: 'sum' }, { field: 'e', function: 'max' }], from: FROM_V1,
      where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - DAY }, { operator: '<', value: T0 }] } };
    const values = (body: { series: Array<{ values: unknown[][] }> }) => body.series[0].values.map((v) => v.slice(1));
    // the first answers come from read snapshots (nothing kept yet)
    assert.deepEqual(values(await queryOk(app, u.token, last2)), [[3, 30], [2, 20]]);
    assert.deepEqual(values(await queryOk(app, u.token, mean)), [[2, 60, 30]]);
    const snapshots = countSnapshots(t, app);
    assert.deepEqual(values(await queryOk(app, u.token, last2)), [[3, 30], [2, 20]]);
    assert.deepEqual(values(await queryOk(app, u.token, mean)), [[2, 60, 30]]);
    assert.equal(snapshots.count(), 0, 'answered without a read snapshot');
    // a write of points alone keeps the version: the next answer has its point, whether it is folded by then or not
    await writeOk(app, u.token, `power,nodeId=n1 p=4,e=40i ${ns(T0 - 500)}`);
    assert.deepEqual(values(await queryOk(app, u.token, last2)), [[4, 40], [3, 30]]);
    assert.deepEqual(values(await queryOk(app, u.token, mean)), [[2.5, 100, 40]]);
    // a new series (a new version): the read snapshot answers, with it
    await writeOk(app, u.token, `power,nodeId=n1,phase=b p=9,e=90i ${ns(T0 - 400)}`);
    snapshots.reset();
    const body = await queryOk(app, u.token, last2);
    assert.deepEqual(body.series.map((s: { tags: Record<string, string> }) => s.tags), [{ nodeId: 'n1' }, { nodeId: 'n1', phase: 'b' }]);
    assert.equal(snapshots.count(), 1, 'the catalogue changed: one read snapshot');
  });

  it('every statement changing a catalogue table changes the version, whoever runs it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const db = app.deps.db;
    const u = await writer(app, 'n1');
    const v0 = await version(app);
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`); // namespace, field, series, shard
    const v1 = await version(app);
    assert.notEqual(v1, v0);
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${ns(T0 - 500)}`); // points alone
    assert.equal(await version(app), v1, 'a write of points alone leaves the version');
    const { id: namespaceId } = (await db.get(sql<{ id: number }>`SELECT id FROM telemetry_namespaces`))!;
    // a writer that knows nothing of the version (a node of the previous release): each table's trigger changes it
    let last = v1;
    const changes = [
      sql`INSERT INTO telemetry_series (namespace_id, measurement, tags, node_id, created_at) VALUES (${namespaceId}, 'power', '{"nodeId":"n1","x":"1"}', 'n1', 0)`,
      sql`INSERT INTO telemetry_fields (namespace_id, measurement, field, ordinal, type) VALUES (${namespaceId}, 'power', 'q', 1, 'float')`,
      sql`UPDATE telemetry_shards SET columns = columns`,
      sql`UPDATE telemetry_namespaces SET created_at = created_at`,
      sql`DELETE FROM telemetry_series WHERE tags = '{"nodeId":"n1","x":"1"}'`,
    ];
    for (const change of changes) {
      await db.run(change);
      const now = await version(app);
      assert.notEqual(now, last, `changed by ${change.compile(db.qb).sql.slice(0, 40)}`);
      last = now;
    }
  });

  it('each kind of catalogue change made on one node is in the next answer of another, which keeps rows', async (t) => {
    const [a, b] = await threeNodes(t);
    const u = await writer(a, 'n1');
    await writeOk(a, u.token, `power,nodeId=n1,phase=a p=1 ${ns(T0 - 1000)}`);
    for (const node of [a, b]) assert.deepEqual(await pointsOf(node, u.token), [[{ nodeId: 'n1', phase: 'a' }, [[1]]]]);
    // a new series, written on B
    await writeOk(b, u.token, `power,nodeId=n1,phase=b p=2 ${ns(T0 - 900)}`);
    assert.deepEqual(await pointsOf(a, u.token), [[{ nodeId: 'n1', phase: 'a' }, [[1]]], [{ nodeId: 'n1', phase: 'b' }, [[2]]]]);
    // a new field, written on B: unknown to A before, known to A's next query
    const selectQ = { select: ['q'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    assert.deepEqual(await queryOk(a, u.token, selectQ), { statement_id: 0, error: 'field "q" does not exist in measurement "power"' });
    await writeOk(b, u.token, `power,nodeId=n1,phase=a q=7 ${ns(T0 - 800)}`);
    assert.deepEqual(await pointsOf(a, u.token, ['p', 'q']), [[{ nodeId: 'n1', phase: 'a' }, [[1, null], [null, 7]]], [{ nodeId: 'n1', phase: 'b' }, [[2, null]]]]);
    // a new shard (the day before), written on B
    await writeOk(b, u.token, `power,nodeId=n1,phase=a p=0 ${ns(T0 - DAY - 1000)}`);
    assert.deepEqual(await pointsOf(a, u.token), [[{ nodeId: 'n1', phase: 'a' }, [[0], [1]]], [{ nodeId: 'n1', phase: 'b' }, [[2]]]]);
    // that shard pruned by B: A answers without it (and without a missing table)
    const dropped = await pruneShards(b.deps.db, T0 - 3000);
    assert.equal(dropped.length, 1);
    assert.deepEqual(await pointsOf(a, u.token), [[{ nodeId: 'n1', phase: 'a' }, [[1]]], [{ nodeId: 'n1', phase: 'b' }, [[2]]]]);
    assert.deepEqual(await pointsOf(b, u.token), await pointsOf(a, u.token));
  });

  it('new series in many namespaces at once on two nodes, with prunes beside them: every write lands, none waits in a circle', async (t) => {
    const [a, b] = await threeNodes(t);
    const u = await writer(a, 'n1');
    await writeOk(a, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 3 * DAY)}`, 'db=old');
    const writes = Array.from({ length: 12 }, (_, k) => write(k % 2 === 0 ? a : b, u.token,
      `power,nodeId=n1,k=${k} p=${k} ${ns(T0 - 1000)}\npower,nodeId=n1,k=${k} p=${k} ${ns(T0 - DAY - 1000)}`, `db=d${k % 4}`));
    const prunes = [pruneShards(a.deps.db, T0 - 2 * DAY), pruneShards(b.deps.db, T0 - 2 * DAY)];
    const results = await Promise.all(writes);
    await Promise.all(prunes);
    for (const r of results) assert.equal(r.status, 204, r.text);
    for (let d = 0; d < 4; d++) {
      const body = await queryOk(b, u.token, { select: ['p'], from: { ...FROM_V1, namespace: { ...FROM_V1.namespace, database: `d${d}` } },
        where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 - 2 * DAY }, { operator: '<', value: T0 }] } });
      assert.deepEqual(body.series.map((s: { tags: { k: string }; values: unknown[][] }) => [Number(s.tags.k), s.values.length]),
        [0, 1, 2].map((i) => [d + 4 * i, 2]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    }
  });
});
