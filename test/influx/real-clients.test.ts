// Real InfluxDB 1.x clients (none written by us) against the built executable: Debian's `influx` shell
// (influxdb-client) and the official Python client (python3-influxdb), both declared in test/support/system-packages.mjs.
// On PostgreSQL the executable runs on a fresh empty database (GRIDKEEPER_DATABASE_URL: test/support/harness.ts).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isolatedBinary, startBinary, type RunningBinary } from '../support/binary.ts';
import { databaseEnv, dropDatabases } from '../support/harness.ts';
import { call } from '../support/http-client.ts';

const PASSWORD = 'influx-clients-password';
const PYTHON = '/usr/bin/python3';
const PY_CLIENT = fileURLToPath(new URL('./clients/python-client.py', import.meta.url));

/** The server with devices n1 and n2, the admin on the premium tier, an api token and a telemetry:read token. */
async function appliance() {
  const { dir, exe } = isolatedBinary();
  const dataDir = join(dir, 'data');
  const server = await startBinary(exe, ['--data-dir', dataDir], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_LOG: 'error', ...await databaseEnv(dataDir) }, dir);
  const { url } = server;
  const refresh = (await call(`${url}/auth/login`, { method: 'POST', json: { username: 'admin@localhost', password: PASSWORD } })).text;
  const access = (await call(`${url}/auth/accesstoken`, { token: refresh })).text;
  for (const nodeId of ['n1', 'n2']) {
    const res = await call(`${url}/v1/device?roleId=1`, { method: 'POST', token: access, json: { properties: { nodeId } } });
    assert.equal(res.status, 200, res.text);
  }
  assert.equal((await call(`${url}/v1/user/admin@localhost/tier`, { method: 'PUT', token: access, json: { tier: 'premium' } })).status, 204);
  const token = async (scopes: string[]) => {
    const res = await call(`${url}/user/tokens`, { method: 'POST', token: access, json: { name: scopes.join('+'), scopes } });
    assert.equal(res.status, 201, res.text);
    return res.body.token as string;
  };
  return { dir, server, port: new URL(url).port, api: await token(['api']), readOnly: await token(['telemetry:read']) };
}

describe('InfluxDB 1.x door: real clients', () => {
  let ctx: Awaited<ReturnType<typeof appliance>>;
  let server: RunningBinary;
  before(async () => { ctx = await appliance(); server = ctx.server; });
  after(async () => {
    try {
      await server?.stop();
    } finally {
      await dropDatabases();
      // the executable's copy and its data dir (~90 MB a run)
      if (ctx) rmSync(ctx.dir, { recursive: true, force: true });
    }
  });

  it('the influx shell (influxdb-client 1.6.7): INSERT, SHOW, SELECT in column, json and csv formats', () => {
    const base = Math.floor(Date.now() / 1000) - 3600;
    const influx = (cmd: string, format = 'column') => {
      const r = spawnSync('/usr/bin/influx', ['-host', '127.0.0.1', '-port', ctx.port, '-username', 'shell', '-password', ctx.api,
        '-database', 'site', '-precision', 's', '-format', format, '-execute', cmd], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 0, `${cmd}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    influx(`INSERT cli,nodeId=n1,phase=L1 power=1.5,count=3i ${base}`);
    influx(`INSERT cli,nodeId=n2 power=4 ${base + 10}`);
    const rng = `time >= ${base}s AND time < ${base + 60}s`;
    assert.deepEqual(JSON.parse(influx(`SELECT * FROM cli WHERE ${rng}`, 'json')), { results: [{ series: [{
      name: 'cli', columns: ['time', 'count', 'nodeId', 'phase', 'power'],
      values: [[base, 3, 'n1', 'L1', 1.5], [base + 10, null, 'n2', null, 4]],
    }] }] });
    assert.equal(influx(`SELECT sum(power) FROM cli WHERE ${rng} GROUP BY "nodeId"`, 'csv'),
      `name,tags,time,sum\ncli,nodeId=n1,${base},1.5\nname,tags,time,sum\ncli,nodeId=n2,${base},4\n`);
    assert.equal(influx('SHOW MEASUREMENTS'), 'name: measurements\nname\n----\ncli\n');
    assert.equal(influx('SHOW TAG VALUES FROM cli WITH KEY = "nodeId"', 'csv'), 'name,key,value\ncli,nodeId,n1\ncli,nodeId,n2\n');
    // a statement gridkeeper does not run is that statement's error, reported by the shell
    const r = spawnSync('/usr/bin/influx', ['-host', '127.0.0.1', '-port', ctx.port, '-username', 'x', '-password', ctx.api, '-execute', 'CREATE DATABASE x'], { encoding: 'utf8' });
    assert.match(r.stderr + r.stdout, /CREATE DATABASE is not supported/);
    const bad = spawnSync('/usr/bin/influx', ['-host', '127.0.0.1', '-port', ctx.port, '-username', 'x', '-password', 'gk_wrong', '-execute', 'SHOW DATABASES'], { encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr + bad.stdout, /authorization failed/);
  });

  it('the influx shell: INSERT without a time, then SELECT of the same point, in one session (-precision, -format json, -database, -execute)', async () => {
    const session = (precision: string, lines: string[]) => {
      const r = spawnSync('/usr/bin/influx', ['-host', '127.0.0.1', '-port', ctx.port, '-username', 'shell', '-password', ctx.api,
        '-database', 'site', '-precision', precision, '-format', 'json', '-execute', lines.join('\n')], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 0, `${r.stderr}${r.stdout}`);
      assert.equal(r.stderr, '');
      // one JSON document per SELECT (an INSERT prints nothing)
      return r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    };
    const before = Math.floor(Date.now() / 1000);
    // The SELECTs name no time range: they read all data, and are heavy enough for the read worker (SQLite). The
    // first loads the namespace there; the points and measurement written after it must still be seen.
    const [first, second, other] = session('s', [
      'INSERT now1,nodeId=n1,phase=L1 power=1.5,count=3i',
      'SELECT * FROM now1',
      'INSERT now1,nodeId=n2 power=2.5',
      'INSERT now2,nodeId=n1 state="on"',
      'SELECT * FROM now1',
      'SELECT * FROM now2',
    ]);
    const after = Math.floor(Date.now() / 1000);
    const t = first.results[0].series[0].values[0][0] as number;
    assert.ok(t >= before && t <= after, `${t} in [${before}, ${after}]`);
    assert.deepEqual(first, { results: [{ series: [{ name: 'now1', columns: ['time', 'count', 'nodeId', 'phase', 'power'], values: [[t, 3, 'n1', 'L1', 1.5]] }] }] });
    const t2 = second.results[0].series[0].values[1][0] as number;
    assert.deepEqual(second, { results: [{ series: [{ name: 'now1', columns: ['time', 'count', 'nodeId', 'phase', 'power'], values: [[t, 3, 'n1', 'L1', 1.5], [t2, null, 'n2', null, 2.5]] }] }] });
    assert.equal(other.results[0].series[0].name, 'now2');
    assert.deepEqual(other.results[0].series[0].values.map((v: unknown[]) => v.slice(1)), [['n1', 'on']]);
    // stored as InfluxDB stores a point without a time: the time of the write cut to the precision (whole seconds)
    const stored = await call(`http://127.0.0.1:${ctx.port}/query?db=site&epoch=ns&q=${encodeURIComponent('SELECT power FROM now1')}`, { token: ctx.api });
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual([...stored.text.matchAll(/\[(\d+),/g)].map((m) => m[1]), [`${t}000000000`, `${t2}000000000`]);
    // ms precision: the same, to the millisecond; the shell prints ms epochs
    const [ms] = session('ms', ['INSERT now3,nodeId=n1 power=7', 'SELECT power FROM now3']);
    const tms = ms.results[0].series[0].values[0][0] as number;
    assert.ok(tms >= after * 1000 && tms <= Date.now(), `${tms}`);
    assert.deepEqual(ms, { results: [{ series: [{ name: 'now3', columns: ['time', 'power'], values: [[tms, 7]] }] }] });
    const rfc = session('rfc3339', ['SELECT power FROM now3'])[0];
    assert.equal(Date.parse(rfc.results[0].series[0].values[0][0]), tms);
  });

  it('the Python client (python3-influxdb 5.3.1): write_points, queries with bind parameters and epoch, SHOW, errors', () => {
    const base = Math.floor(Date.now() / 1000 / 60) * 60 - 7200;
    const r = spawnSync(PYTHON, [PY_CLIENT, '127.0.0.1', ctx.port, ctx.api, ctx.readOnly, String(base)], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    assert.equal(out.version, '1.8.10');
    assert.equal(out.written, true);
    assert.deepEqual(out.raw, [0, 1, 2, 3, 4, 5].map((i) => ({ time: iso(base + 10 * i), power: 1.5 * i, count: i })));
    assert.deepEqual(out.grouped, { statement_id: 0, series: [
      { name: 'py', tags: { nodeId: 'n1' }, columns: ['time', 'mean'], values: [[base, 0.75], [base + 20, 3.75], [base + 40, 6.75]] },
      { name: 'py', tags: { nodeId: 'n2' }, columns: ['time', 'mean'], values: [[base, 99.5], [base + 20, 97.5], [base + 40, 95.5]] },
    ] });
    assert.deepEqual(out.selectors, [{ time: iso(base), max: 100, min: 0 }]);
    assert.deepEqual(out.top, [{ time: base + 40, top: 6 }, { time: base + 50, top: 7.5 }]);
    assert.deepEqual(out.databases, [{ name: 'site' }]);
    // the shell's tests above wrote `cli` and `now1..3` first (tests of a describe run in order)
    assert.deepEqual(out.measurements, ['cli', 'now1', 'now2', 'now3', 'py'].map((name) => ({ name })));
    assert.deepEqual(out.tag_values, [{ key: 'phase', value: 'L1' }, { key: 'phase', value: 'L2' }]);
    assert.deepEqual(out.field_keys, [{ fieldKey: 'count', fieldType: 'integer' }, { fieldKey: 'power', fieldType: 'float' }]);
    // chunked=True: a ResultSet per line; a series of 6 points in chunks of 4
    const rows = (node: string, from: number, to: number) => Array.from({ length: to - from }, (_, k) => [base + 10 * (from + k), node === 'n1' ? 1.5 * (from + k) : 100 - (from + k)]);
    const chunk = (node: string, from: number, to: number, partial: boolean) => ({ series: [{ name: 'py', tags: { nodeId: node }, columns: ['time', 'power'], values: rows(node, from, to), ...(partial ? { partial: true } : {}) }] });
    assert.deepEqual(out.chunked, [chunk('n1', 0, 4, true), chunk('n1', 4, 6, false), chunk('n2', 0, 4, true), chunk('n2', 4, 6, false)]);
    assert.deepEqual(out.chunked_default, [[0, 1, 2, 3, 4, 5].map((i) => ({ time: base + 10 * i, power: 100 - i }))]);
    assert.deepEqual(out.chunked_several, [
      { series: [{ name: 'py', columns: ['time', 'count'], values: [[iso(base), 12]] }] },
      { series: [{ name: 'py', columns: ['tagKey'], values: [['nodeId'], ['phase']] }] },
    ]);
    assert.deepEqual(out.several, [[{ time: base, count: 12 }], [{ time: base + 50, last: 95 }]]);
    assert.deepEqual(out.parse_error, [400, 'error parsing query: found FROM, expected identifier, string, number, bool at line 1, char 8']);
    assert.equal(out.forbidden_write[0], 403);
    assert.match(out.forbidden_write[1], /nodeId "unknown"/);
    assert.deepEqual(out.bad_token, [401, 'authorization failed: invalid token']);
    assert.equal(out.read_only_write[0], 403);
    assert.match(out.read_only_write[1], /scope/);
    assert.deepEqual(out.read_only_query, [{ time: iso(base), count: 12 }]);
  });
});
