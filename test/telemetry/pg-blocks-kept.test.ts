// Sealed blocks kept between requests on PostgreSQL (src/telemetry/pg/pg-reads.ts): a repeated read of a sealed
// window gets its block's row version alone, not its bytes, and answers from the block decoded earlier; a block
// rewritten since (a late write sealed on another node) is a new row version, fetched and decoded again, so the next
// answer holds the late point.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, T0 } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { sealDue } from '../../src/telemetry/seal.ts';
import { keptBlockCount } from '../../src/telemetry/pg/pg-reads.ts';
import pg from 'pg';
import { ns, writeOk, writer } from './fixtures.ts';

const DAY = 86_400_000;
const START = T0 - 4 * DAY;
const skip = testBackend() !== 'postgres' && 'PostgreSQL only (SQLite keeps decoded blocks in its one process, invalidated by its writes: catalogue.ts)';

/** Rows of the statements that fetch sealed blocks' bytes, as every connection of the process receives them. */
function watchBlockFetches(): { rows: Array<Record<string, unknown>>; stop(): void } {
  const seen: Array<Record<string, unknown>> = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const result = (query as (...a: unknown[]) => unknown).call(this, config, ...rest);
    const text = typeof config === 'object' && config !== null ? (config as { text?: string }).text : undefined;
    if (text?.includes('b.xmin::text AS version') && result instanceof Promise) {
      void result.then((r: pg.QueryResult) => seen.push(...r.rows.map((row) => (Array.isArray(row) ? { data: row[row.length - 1] } : row))), () => {});
    }
    return result;
  } as typeof query;
  return { rows: seen, stop: () => { pg.Client.prototype.query = query; } };
}

describe('sealed blocks kept between requests on PostgreSQL', { skip }, () => {
  it('a repeated read uses the kept block; a block rewritten on another node is read again', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const lines = Array.from({ length: 200 }, (_, k) => `power,nodeId=n1 p=${(k % 50) / 2},q=${k}i ${ns(START + k * 7 * 60_000)}`);
    await writeOk(app, u.token, lines.join('\n'));
    await sealDue(app.deps.db, T0);
    const q = `SELECT max(p) FROM power WHERE nodeId = 'n1' AND time >= ${START}ms AND time < ${START + DAY}ms GROUP BY time(6h)`;
    const maxima = async (on = app) => {
      const res = await on.request('GET', `/query?db=energy&epoch=ms&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${u.token}` } });
      assert.equal(res.status, 200, res.text);
      return res.body.results[0].series[0].values.map((v: unknown[]) => v[1]);
    };
    const watched = watchBlockFetches();
    t.after(() => watched.stop());

    const first = await maxima();
    assert.deepEqual(first, [24.5, 24.5, 24.5, 24.5]);
    assert.ok(watched.rows.length >= 1 && watched.rows.every((r) => r.data !== null), 'the first read fetches the bytes');
    assert.ok(keptBlockCount(app.deps.db) >= 1);

    watched.rows.length = 0;
    assert.deepEqual(await maxima(), first);
    assert.ok(watched.rows.length >= 1, 'the block was asked for');
    assert.ok(watched.rows.every((r) => r.data === null), 'a repeated read gets the row version alone');

    // another node writes a late point into the sealed day and seals it: the block's row is rewritten
    const other = await app.anotherNode();
    t.after(() => other.close());
    await writeOk(other, u.token, `power,nodeId=n1 p=99.5 ${ns(START + 7 * 3_600_000)}`);
    await sealDue(other.deps.db, T0);
    watched.rows.length = 0;
    assert.deepEqual(await maxima(), [24.5, 99.5, 24.5, 24.5], 'the rewritten block answers');
    assert.ok(watched.rows.some((r) => r.data !== null), 'the rewritten block was fetched again');
    watched.rows.length = 0;
    assert.deepEqual(await maxima(), [24.5, 99.5, 24.5, 24.5]);
    assert.ok(watched.rows.every((r) => r.data === null));
  });
});
