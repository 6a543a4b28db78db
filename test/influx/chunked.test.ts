// Chunked answers (`chunked=true&chunk_size=N`) against real InfluxDB 1.6.7: the same points written to both, the same
// requests (GET with the query string, POST with a form body) sent to both, and the answers compared line by line,
// byte for byte (floats within 1e-9 relative, keys in the same order). On PostgreSQL gridkeeper runs on a fresh empty
// database (GRIDKEEPER_DATABASE_URL: test/support/harness.ts).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedBinary, startBinary, type RunningBinary } from '../support/binary.ts';
import { databaseEnv, dropDatabases } from '../support/harness.ts';
import { startInfluxd, type RunningInfluxd } from '../support/influxd.ts';

const PASSWORD = 'chunked-answers-password';

/**
 * Series of 25, 10, 7 and 1 points (chunk sizes below fall inside, on and beyond their lengths), and a second
 * measurement. No two series share a time: the order of equal times across series is not what is compared here.
 */
function lineProtocol(base: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 25; i++) lines.push(`energy,nodeId=n1,phase=L1 power=${i + 0.25},count=${i}i,state="s${i % 3}",on=${i % 2 === 0} ${base + 10 * i}`);
  for (let i = 0; i < 10; i++) lines.push(`energy,nodeId=n1,phase=L2 power=${100 - i * 1.5},count=${-i}i ${base + 10 * i + 3}`);
  for (let i = 0; i < 7; i++) lines.push(`energy,nodeId=n2,phase=a<b&c power=${i / 3} ${base + 20 * i + 5}`);
  lines.push(`energy,nodeId=n3 state="<b>&amp;\u2028" ${base + 47}`);
  for (let i = 0; i < 12; i++) lines.push(`grid,nodeId=n2 volts=${230 + (i % 5)} ${base + 10 * i + 1}`);
  return lines.join('\n');
}

/** The statements compared; each runs with every chunk size, once by GET and once by POST. */
function requests(base: number): Array<{ q: string; epoch?: string; pretty?: boolean }> {
  const rng = `time >= ${base}s AND time < ${base + 600}s`;
  return [
    { q: `SELECT * FROM energy WHERE ${rng} GROUP BY "nodeId", phase` },
    { q: `SELECT power, "count" FROM energy WHERE ${rng}`, epoch: 's' },
    { q: `SELECT power FROM energy WHERE ${rng} GROUP BY * LIMIT 8 OFFSET 1`, epoch: 'ns' },
    { q: `SELECT mean(power), max("count") FROM energy WHERE ${rng} GROUP BY time(1m), "nodeId" fill(none)`, epoch: 'ms' },
    { q: `SELECT count(power) FROM energy WHERE ${rng}; SELECT last(power) FROM energy WHERE ${rng} GROUP BY phase; SELECT volts FROM grid WHERE ${rng}`, epoch: 'u' },
    { q: `SELECT power FROM energy WHERE ${rng} AND "nodeId" = 'nobody'; SELECT volts FROM grid WHERE ${rng}` },
    { q: `SELECT * FROM energy WHERE ${rng} AND "nodeId" =~ /n[23]/; SELECT volts FROM grid WHERE ${rng}`, pretty: true },
    { q: 'SHOW MEASUREMENTS; SHOW FIELD KEYS; SHOW TAG KEYS; SHOW TAG VALUES WITH KEY IN ("nodeId", "phase"); SHOW SERIES' },
    // an error after lines were sent: the last statement's, or one in the middle (then see below)
    { q: `SELECT power FROM energy WHERE ${rng} GROUP BY "nodeId"; SELECT nope(power) FROM energy WHERE ${rng}`, epoch: 's' },
    { q: `SELECT volts FROM grid WHERE ${rng}; SELECT nope(power) FROM energy WHERE ${rng}; SELECT count(volts) FROM grid WHERE ${rng}`, epoch: 's' },
  ];
}

/** chunk_size as sent: none (InfluxDB's default, 10000), sizes around the series' lengths, and values InfluxDB ignores. */
const CHUNK_SIZES = [undefined, '1', '3', '7', '10', '25', '26', '0', '-4', 'abc'];

/** Equal, or equal once numbers are masked and within 1e-9 relative (sums may be added in another order). */
function sameLine(ours: string, theirs: string): boolean {
  if (ours === theirs) return true;
  const mask = (s: string) => s.replace(/-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi, '#');
  if (mask(ours) !== mask(theirs)) return false;
  const close = (a: unknown, b: unknown): boolean => {
    if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]));
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
      const ka = Object.keys(a);
      return ka.join() === Object.keys(b).join() && ka.every((k) => close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
    }
    return a === b;
  };
  return close(JSON.parse(ours), JSON.parse(theirs));
}

/** The lines of a chunked answer (a pretty one: its objects, each ending a line that is `}`). */
function linesOf(text: string, pretty: boolean): string[] {
  assert.ok(text.endsWith('\n'), `an answer ends with a newline: ${JSON.stringify(text.slice(-40))}`);
  return pretty ? text.split(/(?<=^\}\n)/m).filter((l) => l !== '') : text.split(/(?<=\n)/);
}

describe('InfluxDB 1.x door: chunked answers, compared with InfluxDB 1.6.7', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-chunked-'));
  let influxd: RunningInfluxd;
  let gk: RunningBinary;
  let bin: { dir: string; exe: string } | undefined;
  let token: string;
  let base: number;

  before(async () => {
    bin = isolatedBinary();
    influxd = await startInfluxd(join(dir, 'influxd'));
    const dataDir = join(bin.dir, 'data');
    gk = await startBinary(bin.exe, ['--data-dir', dataDir], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_LOG: 'error', ...await databaseEnv(dataDir) }, bin.dir);
    const post = (path: string, body: unknown, auth?: string) => fetch(`${gk.url}${path}`, {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    });
    const refresh = await (await post('/auth/login', { username: 'admin@localhost', password: PASSWORD })).text();
    const access = await (await fetch(`${gk.url}/auth/accesstoken`, { headers: { authorization: `Bearer ${refresh}` } })).text();
    for (const nodeId of ['n1', 'n2', 'n3']) assert.equal((await post('/v1/device?roleId=1', { properties: { nodeId } }, access)).status, 200);
    const tier = await fetch(`${gk.url}/v1/user/admin@localhost/tier`, { method: 'PUT', body: '{"tier":"premium"}', headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` } });
    assert.equal(tier.status, 204);
    token = (await (await post('/user/tokens', { name: 'chunked', scopes: ['api'] }, access)).json() as { token: string }).token;
    // whole hours, two hours ago: every point lies in the past (gridkeeper's open upper bound is now)
    base = Math.floor(Date.now() / 3_600_000) * 3600 - 7200;
    assert.equal((await fetch(`${influxd.url}/query`, { method: 'POST', body: new URLSearchParams({ q: 'CREATE DATABASE site' }) })).status, 200);
    for (const [url, auth] of [[influxd.url, {}], [gk.url, { authorization: `Bearer ${token}` }]] as const) {
      const res = await fetch(`${url}/write?db=site&precision=s`, { method: 'POST', body: lineProtocol(base), headers: auth });
      assert.equal(res.status, 204, await res.text());
    }
  });

  after(async () => {
    influxd?.stop();
    try {
      await gk?.stop();
    } finally {
      await dropDatabases();
      rmSync(dir, { recursive: true, force: true });
      // the executable's copy and its data dir (~90 MB a run)
      if (bin) rmSync(bin.dir, { recursive: true, force: true });
    }
  });

  /** GET: every parameter in the query string; POST: in a form body, but pretty (InfluxDB reads it from the URL only). */
  async function ask(url: string, method: 'GET' | 'POST', params: Record<string, string>, auth: boolean) {
    const { pretty, ...rest } = params;
    const form = new URLSearchParams(rest);
    const headers: Record<string, string> = auth ? { authorization: `Bearer ${token}` } : {};
    const res = method === 'GET'
      ? await fetch(`${url}/query?${new URLSearchParams(params)}`, { headers })
      : await fetch(`${url}/query${pretty ? `?pretty=${pretty}` : ''}`, { method, body: form, headers });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  it('answers every statement, chunk size and method with InfluxDB\'s lines', async () => {
    const failures: string[] = [];
    let compared = 0;
    for (const r of requests(base)) {
      for (const size of CHUNK_SIZES) {
        for (const method of ['GET', 'POST'] as const) {
          const params: Record<string, string> = { db: 'site', q: r.q, chunked: 'true' };
          if (size !== undefined) params.chunk_size = size;
          if (r.epoch) params.epoch = r.epoch;
          if (r.pretty) params.pretty = 'true';
          const [ours, theirs] = await Promise.all([ask(gk.url, method, params, true), ask(influxd.url, method, params, false)]);
          const what = `${method} chunk_size=${size} ${r.epoch ? `epoch=${r.epoch} ` : ''}${r.q}`;
          assert.equal(ours.status, 200, `${what}: ${ours.text}`);
          assert.equal(theirs.status, 200, `${what}: ${theirs.text}`);
          assert.equal(ours.headers.get('content-type'), 'application/json');
          // streamed: no length announced
          assert.equal(ours.headers.get('content-length'), null);
          assert.equal(ours.headers.get('transfer-encoding'), 'chunked');
          let mine = linesOf(ours.text, r.pretty === true);
          let influx = linesOf(theirs.text, r.pretty === true);
          // After a statement's error InfluxDB 1.6 runs nothing more, and says "not executed" once per statement left
          // but one, under the failing statement's id. gridkeeper answers every statement; both are compared up to the
          // error.
          const failed = influx.findIndex((l) => l.includes('"error":'));
          if (failed >= 0 && failed < influx.length - 1) {
            assert.ok(influx.slice(failed + 1).every((l) => l.includes('"error":"not executed"')), theirs.text);
            const rest = mine.slice(failed + 1);
            assert.ok(rest.length > 0 && rest.every((l) => !l.includes('"error"')), `gridkeeper answers the statements after the error: ${ours.text}`);
            mine = mine.slice(0, failed + 1);
            influx = influx.slice(0, failed + 1);
          }
          compared++;
          if (mine.length !== influx.length || mine.some((l, i) => !sameLine(l, influx[i]))) {
            const at = mine.findIndex((l, i) => !sameLine(l, influx[i] ?? ''));
            const a = influx[at] ?? '';
            const b = mine[at] ?? '';
            let c = 0;
            while (c < a.length && a[c] === b[c]) c++;
            const near = (l: string) => JSON.stringify(l.slice(Math.max(0, c - 300), c + 300));
            failures.push(`${what}\n  line ${at} of ${mine.length} (influxdb: ${influx.length}), from character ${c}\n  influxdb:   ${near(a)}\n  gridkeeper: ${near(b)}`);
          }
        }
      }
    }
    assert.equal(failures.length, 0, `${failures.length} of ${compared} answers differ:\n${failures.slice(0, 6).join('\n')}`);
    assert.equal(compared, requests(base).length * CHUNK_SIZES.length * 2);
  });

  it('cuts a series of more than the default 10000 rows into chunks of 10000', async () => {
    // 10001 points of one series, a millisecond apart, to both servers
    const start = base + 1800;
    const body = Array.from({ length: 10_001 }, (_, i) => `many,nodeId=n1 v=${i}i ${start * 1000 + i}`).join('\n');
    for (const [url, auth] of [[influxd.url, {}], [gk.url, { authorization: `Bearer ${token}` }]] as const) {
      const res = await fetch(`${url}/write?db=site&precision=ms`, { method: 'POST', body, headers: auth });
      assert.equal(res.status, 204, await res.text());
    }
    const q = `SELECT v FROM many WHERE time >= ${start}s AND time < ${start + 11}s`;
    const params = { db: 'site', q, chunked: 'true', epoch: 'ms' };
    const [ours, theirs] = await Promise.all([ask(gk.url, 'GET', params, true), ask(influxd.url, 'GET', params, false)]);
    assert.equal(ours.status, 200, ours.text);
    assert.equal(ours.text, theirs.text);
    const lines = ours.text.trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.results[0].series[0].values.length, l.results[0].partial ?? false]), [[10_000, true], [1, false]]);
    // not chunked: one document, as InfluxDB merges it
    const whole = await ask(gk.url, 'POST', { db: 'site', q, epoch: 'ms' }, true);
    assert.equal(JSON.parse(whole.text).results[0].series[0].values.length, 10_001);
  });
});
