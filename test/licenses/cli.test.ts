// `gridkeeper license create`: keys on stdout one per line, rows in the data dir's database, the API's rules.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/boot/cli.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createApp } from '../../src/boot/app.ts';
import { signToken } from '../../src/auth/tokens.ts';
import { GENERATED_KEY } from '../../src/licenses/license-keys.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

function withDataDir(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-license-cli-'));
    try { await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
  };
}

async function rows(dir: string) {
  const db = openDatabase({ file: join(dir, 'gridkeeper.db'), readonly: true });
  try {
    return await db.all(db.qb.selectFrom('licenses').selectAll().orderBy('key'));
  } finally {
    await db.close();
  }
}

describe('gridkeeper license create', () => {
  test('prints 50 keys one per line and stores 50 licenses with the given terms', withDataDir(async (dir) => {
    const c = capture();
    const before = Date.now();
    const code = await runCli(['license', 'create', '--type', 'residential', '--duration', '365', '--solar-kw', '10', '--count', '50', '--data-dir', dir], {}, c.io);
    assert.equal(code, 0, c.err.join('\n'));
    assert.deepEqual(c.err, []);
    assert.equal(c.out.length, 50);
    for (const key of c.out) assert.match(key, GENERATED_KEY);
    assert.equal(new Set(c.out).size, 50);
    const stored = await rows(dir);
    assert.deepEqual(stored.map((r) => r.key), [...c.out].sort());
    for (const r of stored) {
      assert.deepEqual({ ...r, id: 'x', key: 'x', creation_date: 0 }, {
        id: 'x', key: 'x', type: 'residential', duration: 365, grid_kw: null, solar_kw: 10, battery_kw: null, ev_kw: null,
        creation_date: 0, activation_date: null,
      });
      assert.ok(r.creation_date >= before && r.creation_date <= Date.now());
    }
  }));

  test('every power flag, --flag=value, a chosen key; a taken key exits 2 and writes nothing', withDataDir(async (dir) => {
    const c = capture();
    const code = await runCli(['license', 'create', '--type=commercial', '--duration=30', '--grid-kw', '1', '--solar-kw', '2',
      '--battery-kw', '3', '--ev-kw', '4', '--key', 'IMPORTED-KEY-1', '--data-dir', dir], {}, c.io);
    assert.equal(code, 0, c.err.join('\n'));
    assert.deepEqual(c.out, ['IMPORTED-KEY-1']);
    const [row] = await rows(dir);
    assert.deepEqual({ ...row, id: 'x', creation_date: 0 }, {
      id: 'x', key: 'IMPORTED-KEY-1', type: 'commercial', duration: 30, grid_kw: 1, solar_kw: 2, battery_kw: 3, ev_kw: 4,
      creation_date: 0, activation_date: null,
    });
    const again = capture();
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '1', '--key', 'IMPORTED-KEY-1', '--data-dir', dir], {}, again.io), 2);
    assert.deepEqual(again.out, []);
    assert.deepEqual(again.err, ['gridkeeper: license create: a license with this key already exists']);
    assert.equal((await rows(dir)).length, 1);
  }));

  test('bad arguments exit 2 naming the flag; nothing is written', withDataDir(async (dir) => {
    const cases: [string[], RegExp][] = [
      [['--duration', '365'], /^gridkeeper: license create: --type is required$/],
      [['--type', 'residential'], /^gridkeeper: license create: --duration is required$/],
      [['--type', 'industrial', '--duration', '365'], /^gridkeeper: license create: --type: expected residential or commercial$/],
      [['--type', 'residential', '--duration', 'year'], /^gridkeeper: license create: --duration: /],
      [['--type', 'residential', '--duration', '365', '--count', '0'], /^gridkeeper: license create: --count: expected an integer from 1 to 1000$/],
      [['--type', 'residential', '--duration', '365', '--count', '1001'], /--count: /],
      [['--type', 'residential', '--duration', '365', '--solar-kw', '-2'], /--solar-kw: /],
      [['--type', 'residential', '--duration', '365', '--ev-kw', '1.5'], /--ev-kw: /],
      [['--type', 'residential', '--duration', '365', '--key', 'K', '--count', '2'], /--count: a chosen key creates one license/],
      [['--type', 'residential', '--duration', '365', '--color', 'red'], /unknown argument --color/],
      [['--type', 'residential', '--duration', '365', 'extra'], /unknown argument extra/],
      [['--type', 'residential', '--duration'], /--duration needs a value/],
      [['--type', 'residential', '--type', 'commercial', '--duration', '1'], /--type given twice/],
    ];
    for (const [args, message] of cases) {
      const c = capture();
      assert.equal(await runCli(['license', 'create', ...args, '--data-dir', dir], {}, c.io), 2, args.join(' '));
      assert.deepEqual(c.out, []);
      assert.match(c.err.join('\n'), message, args.join(' '));
    }
    // validation happens before the database is touched
    await assert.rejects(rows(dir));
  }));

  test('--help lists the command', async () => {
    const c = capture();
    assert.equal(await runCli(['--help'], {}, c.io), 0);
    assert.match(c.out.join('\n'), /license create --type residential\|commercial --duration DAYS/);
  });

  test('keys made by the CLI work in the service on the same database', withDataDir(async (dir) => {
    const c = capture();
    assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '10', '--data-dir', dir], {}, c.io), 0);
    const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: 'admin-password-123', GRIDKEEPER_DATA_DIR: dir }, []);
    const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
    try {
      const now = Date.now();
      const { deps } = await createDeps({ config, db, now: () => now, log: createLogger('error') });
      const { app } = createApp(deps);
      const admin = (await db.get(db.qb.selectFrom('users').select('id').where('email', '=', 'admin@localhost')))!;
      const { token } = await signToken(deps.keys, { typ: 'access', sub: admin.id }, now);
      const res = await app.request('/v1/license/activate', {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ key: c.out[0] }),
      }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
      const body = await res.json() as any;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.license.key, c.out[0]);
      assert.equal(body.license.activationDate, new Date(now).toISOString());
    } finally {
      await db.close();
    }
  }));
});
