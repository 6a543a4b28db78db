// The PostgreSQL backend of the data layer on the machine's server (always, whichever backend the suite runs on):
// statements, transaction handles and savepoints, IN-lists, serializable write units with retry, migrations under
// the advisory lock, and a clear error for a server that cannot be reached.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { findUserByEmail } from '../../src/auth/users.store.ts';
import { openPostgres, DatabaseUnavailable } from '../../src/db/postgres.ts';
import { builders, compileQuery } from '../../src/db/compile.ts';
import { MAX_NAMES, PreparedNames } from '../../src/db/prepared.ts';
import { arrayParam, columnOfArray, decodeArray, matrixParam, rowsParam, type ArrayElement } from '../../src/telemetry/pg/pg-shards.ts';
import fc from 'fast-check';
import { columnFromValues } from '../../src/telemetry/blocks/values.ts';
import { BOOLEAN, FLOAT, INT64_MAX, INTEGER, STRING, UNSIGNED } from '../../src/telemetry/line-protocol/line-scanner.ts';
import { rowValues } from '../telemetry/blocks/arbitraries.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';
import { isIn, inValues } from '../../src/db/in-list.ts';
import { checkDatabase, openConfiguredDatabase } from '../../src/db/configured.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../../src/lib/config.ts';
import { databaseUrl, freshPostgres, emptyPostgres } from '../support/postgres.ts';

/** An empty database on the test server, dropped when the test ends. */
async function emptyDatabase(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const db = await emptyPostgres();
  t.after(() => db.drop());
  return db.url;
}

describe('PostgreSQL data layer', () => {
  test('builder queries, sql templates and IN-lists (numbers, text, empty) read as on SQLite', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    const a = await db.get(db.qb.insertInto('users').values({ email: 'A@b', password_hash: 'x', password_changed_at: 1, created_at: 1 }).returning('id'));
    const b = await db.get(db.qb.insertInto('users').values({ email: 'c@d', password_hash: 'x', password_changed_at: 2, created_at: 2 }).returning('id'));
    assert.equal(typeof a!.id, 'number', 'BIGINT ids arrive as numbers');
    // e-mail addresses compare by their ASCII letters' case as SQLite's NOCASE does, through the users store
    assert.deepEqual((await findUserByEmail(db, 'a@B'))?.id, a!.id);
    assert.equal(await findUserByEmail(db, 'á@b'), undefined);
    const ids = async (list: readonly number[]) => (await db.all(db.qb.selectFrom('users').select('id').where(isIn('id', list)).orderBy('id'))).map((r) => r.id);
    assert.deepEqual(await ids([b!.id, a!.id, 999]), [a!.id, b!.id]);
    assert.deepEqual(await ids([]), []);
    const byEmail = await db.all(sql<{ n: number }>`SELECT count(*) AS n FROM users WHERE email ${inValues(['c@d', 'x@y'])}`);
    assert.deepEqual(byEmail, [{ n: 1 }], 'count(*) arrives as a number');
    assert.deepEqual(await db.get(sql<{ flag: number }>`SELECT ${true}::int AS flag`), { flag: 1 }, 'booleans bind as 0/1');
    assert.equal((await db.run(db.qb.updateTable('users').set({ tier: 'premium' }).where('id', '=', a!.id))).changes, 1);
    // rows(): arrays in the order of the select list, on the pool and in a transaction; all() still gives objects
    const query = db.qb.selectFrom('users').select(['email', 'id', 'tier']).where(isIn('id', [a!.id, b!.id])).orderBy('id');
    assert.deepEqual(await db.rows(query), [['A@b', a!.id, 'premium'], ['c@d', b!.id, 'basic']]);
    await db.tx(async (tx) => { assert.deepEqual(await tx.rows(query), [['A@b', a!.id, 'premium'], ['c@d', b!.id, 'basic']]); });
    assert.deepEqual((await db.all(query))[0], { email: 'A@b', id: a!.id, tier: 'premium' });
  });

  test('an IN-list is one parameter in each dialect: = ANY($n) with an array, json_each(?) with a JSON text', () => {
    const template = sql`SELECT 1 FROM t WHERE a ${inValues([1, 2])} AND b = ${true} AND c ${inValues(['x'])}`;
    const pg = compileQuery(template, builders.postgres);
    assert.equal(pg.sql, 'SELECT 1 FROM t WHERE a = ANY($1) AND b = $2 AND c = ANY($3)');
    assert.deepEqual(pg.parameters, [[1, 2], true, ['x']]);
    const lite = compileQuery(template, builders.sqlite);
    assert.equal(lite.sql, 'SELECT 1 FROM t WHERE a IN (SELECT value FROM json_each(?)) AND b = ? AND c IN (SELECT value FROM json_each(?))');
    assert.deepEqual(lite.parameters, ['[1,2]', true, '["x"]']);
    // the builder's form: one text whatever the list's length
    const q = (ids: number[]) => compileQuery(builders.postgres.selectFrom('users').select('id').where(isIn('id', ids)));
    assert.equal(q([]).sql, q([1, 2, 3]).sql);
    assert.equal(q([1]).sql, 'select "id" from "users" where "id" = ANY($1)');
    assert.equal(compileQuery(builders.sqlite.selectFrom('users').select('id').where(isIn('id', [1]))).sql,
      'select "id" from "users" where "id" IN (SELECT value FROM json_each(?))');
  });

  test('transactions: handles, savepoints, rollback, a dead handle after the end', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    const put = (h: typeof db, k: string) => h.run(sql`INSERT INTO settings (key, value) VALUES (${k}, 'v')`);
    const keys = async () => (await db.all(sql<{ key: string }>`SELECT key FROM settings ORDER BY key`)).map((r) => r.key);
    let kept: typeof db | undefined;
    await db.tx(async (tx) => {
      kept = tx;
      await put(tx, 'a');
      await assert.rejects(tx.tx(async (inner) => { await put(inner, 'b'); throw new Error('inner'); }), /inner/);
      await tx.write((inner) => put(inner, 'c'));
    });
    await assert.rejects(db.tx(async (tx) => { await put(tx, 'd'); throw new Error('outer'); }), /outer/);
    assert.deepEqual(await keys(), ['a', 'c']);
    await assert.rejects(put(kept!, 'e'), /after its transaction ended/);
  });

  test('savepoints sent with the next statement keep every unit all-or-nothing: failures before, at and after the first statement, nested, and in the statement sent with the savepoint', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    const put = (h: typeof db, k: string) => h.run(sql`INSERT INTO settings (key, value) VALUES (${k}, 'v')`);
    const keys = async () => (await db.all(sql<{ key: string }>`SELECT key FROM settings ORDER BY key`)).map((r) => r.key);
    await db.tx(async (tx) => {
      await put(tx, 'a');
      // fails before any statement ran inside it (its savepoint was never sent)
      await assert.rejects(tx.tx(async () => { throw new Error('early'); }), /early/);
      // a nested unit completed inside a unit that then fails: both undone
      await assert.rejects(tx.tx(async (outer) => {
        await outer.tx((inner) => put(inner, 'b'));
        await put(outer, 'c');
        throw new Error('late');
      }), /late/);
      // a statement that fails on the server (duplicate key) undoes its unit only
      await assert.rejects(tx.tx(async (u) => { await put(u, 'd'); await put(u, 'a'); }), /duplicate key/);
      // the first statement of a unit has no parameters: it goes in one round trip with the savepoint, and fails there
      await assert.rejects(tx.tx(async (u) => { await u.script('INSERT INTO settings (key, value) VALUES (\'e\', \'v\'); SELECT 1 / 0'); }), /division by zero/);
      // a parameterless statement after a savepoint and a release that waited: its answer is its own
      await tx.tx(async (u) => {
        await u.tx((inner) => put(inner, 'f'));
        assert.deepEqual(await u.all(sql<{ n: number }>`SELECT count(*)::int AS n FROM settings`), [{ n: 2 }]);
      });
      await put(tx, 'g');
    });
    assert.deepEqual(await keys(), ['a', 'f', 'g']);
    // write units of one turn: the failing one alone is undone, before or after its first statement
    const results = await Promise.allSettled([
      db.write((u) => put(u, 'h')),
      db.write(async () => { throw new Error('unit'); }),
      db.write(async (u) => { await put(u, 'i'); throw new Error('unit after a write'); }),
      db.write((u) => put(u, 'j')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.deepEqual(await keys(), ['a', 'f', 'g', 'h', 'j']);
  });

  test('array parameters: numbers in the binary array format read back exactly as their text form does', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    const cases: Array<[ArrayElement, Array<number | bigint | string | null>]> = [
      ['bigint', [0, -1, 1, 2 ** 32, -(2 ** 32), 2 ** 32 - 1, -(2 ** 32) - 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 9007199254740993n, -(2n ** 63n), 2n ** 63n - 1n, null, 1_795_799_804_000]],
      ['integer', [0, -1, 2147483647, -2147483648, null, 999_999]],
      ['double precision', [0, -0, 1.5, -2.25, 0.1, 1e-300, 1e300, Number.MAX_VALUE, Number.MIN_VALUE, 1 / 3, null, -1e21]],
      ['text', ['a', 'with "quotes" and \\ backslash', '', null, 'NULL', '⚡']],
    ];
    for (const [type, values] of cases) {
      const param = arrayParam(values, type);
      assert.equal(Buffer.isBuffer(param), type !== 'text', `${type}: binary unless text`);
      const read = async (p: Buffer | string) => (await db.all(sql<{ v: string | null }>`SELECT v::text AS v FROM unnest(${p}::${sql.raw(type)}[]) WITH ORDINALITY AS u(v, n) ORDER BY n`)).map((r) => r.v);
      const got = await read(param);
      // floats compared as numbers (-0 stays -0); the others as the server prints them
      if (type === 'double precision') assert.deepEqual(got.map((v) => (v === null ? null : Number(v))), values, type);
      else assert.deepEqual(got, values.map((v) => (v === null ? null : String(v))), type);
    }
    // what a binary element cannot hold exactly keeps the text form, and the server judges it as before
    assert.equal(typeof arrayParam([1.5, 2], 'bigint'), 'string');
    assert.equal(typeof arrayParam([2 ** 31], 'integer'), 'string');
    assert.equal(typeof arrayParam([2n ** 63n], 'bigint'), 'string');
    await assert.rejects(db.all(sql`SELECT unnest(${arrayParam([2n ** 63n], 'bigint')}::bigint[])`), /out of range/);

    // columns at chosen rows: one dimension (rowsParam) and two (matrixParam, row k = column k), binary or text alike
    const rows = [3, 0, 2];
    const matrices: Array<[ArrayElement, Array<Array<number | bigint | string | null>>, string]> = [
      ['double precision', [[0.5, null, -1e300, 7], [1, 2, 3, 4]], '{{7,0.5,-1e+300},{4,1,3}}'],
      ['bigint', [[1, 9007199254740993n, null, -5]], '{{-5,1,NULL}}'],
      ['bigint', [[1.5, 2, 3, 4]], '{{4,1.5,3}}'], // not an integer: the text form, refused by the server below
      ['text', [['a', 'b"\\', null, 'd'], ['e', 'f', 'g', 'h']], '{{d,a,NULL},{h,e,g}}'],
    ];
    for (const [type, columns, text] of matrices) {
      const param = matrixParam(columns, rows, type)!;
      if (type === 'bigint' && text.includes('1.5')) {
        assert.equal(typeof param, 'string');
        await assert.rejects(db.all(sql`SELECT ${param}::bigint[] AS m`), /invalid input syntax/);
        continue;
      }
      assert.equal(Buffer.isBuffer(param), type !== 'text', `${type}: binary unless text`);
      assert.deepEqual(await db.get(sql<{ m: string }>`SELECT (${param}::${sql.raw(type)}[])::text AS m`), { m: text }, type);
    }
    assert.equal(matrixParam([], rows, 'bigint'), null, 'no columns: NULL');
    // text is always the text form, also when every value is NULL (a binary array must name its element type)
    assert.deepEqual(await db.get(sql<{ m: string }>`SELECT (${matrixParam([[null, null]], [0, 1], 'text')}::text[])::text AS m`), { m: '{{NULL,NULL}}' });
    assert.deepEqual(await db.get(sql<{ m: string }>`SELECT (${arrayParam([null], 'text')}::text[])::text AS m`), { m: '{NULL}' });
    assert.deepEqual(await db.get(sql<{ m: string }>`SELECT (${rowsParam([10, 20, 30, 40], rows, 'integer')}::integer[])::text AS m`), { m: '{40,10,30}' });
    assert.deepEqual(await db.get(sql<{ m: string }>`SELECT (${matrixParam([['x', 'y']], [1], 'text')}::text[])::text AS m`), { m: '{{y}}' });
  });

  test('arrays read in the binary format (array_send) decode to the values the server holds, in order', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    const send = async (literal: string, type: string) =>
      (await db.rows<[Buffer | null]>(sql`SELECT array_send(${literal}::${sql.raw(type)}[])`))[0][0];
    // int8 as decimal text (every digit, past 2^53 too) and as numbers (times)
    const ints = '{0,-1,4294967296,-4294967297,9007199254740993,-9223372036854775808,9223372036854775807,NULL,1795799804000}';
    assert.deepEqual(decodeArray(await send(ints, 'bigint'), 'decimal'),
      ['0', '-1', '4294967296', '-4294967297', '9007199254740993', '-9223372036854775808', '9223372036854775807', null, '1795799804000']);
    assert.deepEqual(decodeArray(await send('{1795799804000,-1795799804000,0}', 'bigint'), 'number'), [1795799804000, -1795799804000, 0]);
    assert.deepEqual(decodeArray(await send('{0,-1,2147483647,-2147483648,NULL}', 'integer'), 'number'), [0, -1, 2147483647, -2147483648, null]);
    const floats = decodeArray(await send('{0,-0,1.5,0.1,1e-300,-1e21,1.7976931348623157e308,5e-324,NULL}', 'double precision'), 'decimal');
    assert.deepEqual(floats, [0, -0, 1.5, 0.1, 1e-300, -1e21, Number.MAX_VALUE, Number.MIN_VALUE, null]);
    assert.ok(Object.is(floats[1], -0), '-0 keeps its sign');
    assert.deepEqual(decodeArray(await send('{"a","with \\"quotes\\"","",NULL,"⚡ volt"}', 'text'), 'text'), ['a', 'with "quotes"', '', null, '⚡ volt']);
    // empty and NULL arrays: no elements; the float column of a shard's points, aggregated in order
    assert.deepEqual(decodeArray(await send('{}', 'bigint'), 'decimal'), []);
    assert.deepEqual(decodeArray(null, 'number'), []);
    const ordered = (await db.rows<[Buffer]>(sql`SELECT array_send(array_agg(v ORDER BY n DESC)) FROM unnest('{3.5,NULL,-2}'::float8[]) WITH ORDINALITY AS u(v, n)`))[0][0];
    assert.deepEqual(decodeArray(ordered, 'decimal'), [-2, null, 3.5]);
  });

  test('a field\'s values as a binary array decode to the column its values make, for every kind (sealing reads them so)', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    for (const kind of [FLOAT, INTEGER, UNSIGNED, STRING, BOOLEAN] as const) {
      await fc.assert(fc.asyncProperty(rowValues(kind, 120), async (values) => {
        // as a shard table stores them: booleans as 1/0 in int8, unsigned as the int8 of their bits, strings as text
        // (no NUL: line protocol refuses it, and PostgreSQL's text cannot hold it)
        const stored = values.map((v) => (v === null ? null : typeof v === 'boolean' ? (v ? 1 : 0)
          : typeof v === 'bigint' && v > INT64_MAX ? v - 2n ** 64n : typeof v === 'string' ? v.replaceAll('\0', '').toWellFormed() : v));
        const type = kind === FLOAT ? 'double precision' : kind === STRING ? 'text' : 'bigint';
        const bytes = (await db.rows<[Buffer | null]>(sql`SELECT array_send(${arrayParam(stored as never, type)}::${sql.raw(type)}[])`))[0][0];
        const expected = columnFromValues(kind, stored.map((v) => (v === null ? null : kind === BOOLEAN ? v === 1 : v)));
        assert.deepEqual(columnOfArray(bytes, kind, values.length), expected);
      }), { seed: 38, numRuns: 40 });
    }
    assert.throws(() => columnOfArray(Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 1]), INTEGER, 3), RangeError, 'a column of another length');
  });

  test('write units are serializable: 20 racing read-then-increment units lose no update', async (t) => {
    const { db, drop } = await freshPostgres();
    t.after(drop);
    await db.run(sql`INSERT INTO settings (key, value) VALUES ('n', '0')`);
    await Promise.all(Array.from({ length: 20 }, () => db.write(async (tx) => {
      const row = await tx.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'n'`);
      await new Promise((r) => setTimeout(r, 1)); // let the others read the same value
      await tx.run(sql`UPDATE settings SET value = ${String(Number(row!.value) + 1)} WHERE key = 'n'`);
    })));
    assert.deepEqual(await db.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'n'`), { value: '20' });
  });

  test('three processes migrating one empty database at once: each step applied once', async (t) => {
    const url = await emptyDatabase(t);
    const handles = [0, 1, 2].map(() => openPostgres({ url, poolSize: 2 }));
    t.after(async () => { for (const h of handles) await h.close(); });
    const results = await Promise.all(handles.map((h) => migrate(h, 0)));
    assert.deepEqual(results.flat().sort(), migrations.map((m) => m.name).sort(), 'every step applied exactly once, by one of them');
    const recorded = await handles[0].all(sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY name`);
    assert.deepEqual(recorded.map((r) => r.name), migrations.map((m) => m.name));
    assert.deepEqual(await migrate(handles[1], 0), []);
  });

  test('an unreachable server is DatabaseUnavailable, and at start a ConfigError naming the setting', async (t) => {
    const db = openPostgres({ url: 'postgres://postgres@127.0.0.1:1/nowhere', connectTimeoutMs: 2000 });
    t.after(() => db.close());
    await assert.rejects(db.get(sql`SELECT 1`), DatabaseUnavailable);
    await assert.rejects(checkDatabase(db), (err: unknown) => err instanceof ConfigError && /GRIDKEEPER_DATABASE_URL/.test(err.message));
  });

  test('GRIDKEEPER_DATABASE_URL / --database-url: postgres URLs only, never echoed', () => {
    assert.equal(parseConfig({ GRIDKEEPER_DATABASE_URL: 'postgresql://u:p@db:5432/gk?sslmode=require' }, []).config.databaseUrl, 'postgresql://u:p@db:5432/gk?sslmode=require');
    assert.equal(parseConfig({}, ['--database-url', 'postgres://u@h/gk']).config.databaseUrl, 'postgres://u@h/gk');
    assert.equal(parseConfig({}, []).config.databaseUrl, undefined);
    assert.throws(() => parseConfig({ GRIDKEEPER_DATABASE_URL: 'mysql://u:secret@h/db' }, []), (err: unknown) =>
      err instanceof ConfigError && /GRIDKEEPER_DATABASE_URL \/ --database-url: expected postgres:\/\//.test(err.message) && !err.message.includes('secret'));
  });

  test('a connection the server drops in the middle of a transaction fails that transaction as DatabaseUnavailable; the process and the pool live on', async (t) => {
    const { db, name, drop } = await freshPostgres();
    t.after(drop);
    const killer = openPostgres({ url: databaseUrl(name), poolSize: 1 });
    t.after(() => killer.close());
    const outcome = db.tx(async (tx) => {
      const { pid } = (await tx.get(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`))!;
      // between two statements, with none running on it, the server ends this connection (as a restart does)
      await killer.get(sql`SELECT pg_terminate_backend(${pid})`);
      await new Promise((r) => setTimeout(r, 200));
      return tx.get(sql`SELECT 1 AS one`);
    });
    await assert.rejects(outcome, DatabaseUnavailable);
    assert.deepEqual(await db.get(sql<{ one: number }>`SELECT 1 AS one`), { one: 1 }, 'the next statement gets a fresh connection');
  });

  test('statements it repeats go as named prepared statements, parsed once per connection; shard tables, * and one-off texts unnamed', async (t) => {
    const { name, drop } = await freshPostgres();
    t.after(drop);
    const db = openPostgres({ url: databaseUrl(name), poolSize: 1 }); // one connection: pg_prepared_statements is per session
    const off = openPostgres({ url: databaseUrl(name), poolSize: 1, prepare: false });
    t.after(async () => { await db.close(); await off.close(); });
    await db.run(sql`INSERT INTO settings (key, value) VALUES ('a', '1'), ('b', '2'), ('c', '3')`);
    const prepared = async (on = db) => (await on.all(sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY statement`))
      .map((r) => r.statement.replace(/\s+/g, ' '));
    const value = (on: typeof db, k: string) => on.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = ${k}`);
    assert.deepEqual(await value(db, 'a'), { value: '1' });
    assert.deepEqual(await prepared(), [], 'a text seen once is sent unnamed');
    assert.deepEqual(await value(db, 'b'), { value: '2' });
    assert.deepEqual(await prepared(), ['SELECT value FROM settings WHERE key = $1'], 'seen again: prepared under a name');
    // the prepared statement answers for every value, on the pool and in a transaction, and writes still roll back
    assert.deepEqual(await value(db, 'c'), { value: '3' });
    assert.equal(await value(db, 'zz'), undefined);
    await assert.rejects(db.tx(async (tx) => {
      assert.deepEqual(await value(tx, 'a'), { value: '1' });
      await tx.run(sql`UPDATE settings SET value = ${'9'} WHERE key = ${'a'}`);
      await tx.run(sql`UPDATE settings SET value = ${'9'} WHERE key = ${'a'}`);
      throw new Error('undo');
    }), /undo/);
    assert.deepEqual(await value(db, 'a'), { value: '1' });
    assert.equal(db.poolStats!().prepared, 2);
    // never named: no parameters, a shard table (created and dropped at run time), a result of `*`
    for (let i = 0; i < 3; i++) {
      await db.all(sql`SELECT key FROM settings ORDER BY key`);
      await db.all(sql`SELECT ${i}::int AS n FROM settings AS telemetry_shard_1_1 LIMIT 1`);
      await db.all(sql`SELECT * FROM settings WHERE key = ${'a'}`);
      await db.all(sql`SELECT s.* FROM settings s WHERE key = ${'a'}`);
    }
    assert.deepEqual(await prepared(), ['SELECT value FROM settings WHERE key = $1', 'UPDATE settings SET value = $1 WHERE key = $2']);
    // a * over a derived table aliased gk_… is over the columns of the statement inside, which the same rule checks
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await db.all(sql`SELECT gk_i.* FROM (SELECT value FROM settings WHERE key = ${'b'}) AS gk_i`), [{ value: '2' }]);
      await db.all(sql`SELECT gk_i.* FROM (SELECT * FROM settings WHERE key = ${'b'}) AS gk_i`);
    }
    assert.deepEqual(await prepared(), ['SELECT gk_i.* FROM (SELECT value FROM settings WHERE key = $1) AS gk_i',
      'SELECT value FROM settings WHERE key = $1', 'UPDATE settings SET value = $1 WHERE key = $2']);
    // switched off: nothing named
    for (let i = 0; i < 3; i++) assert.deepEqual(await value(off, 'b'), { value: '2' });
    assert.deepEqual(await prepared(off), []);
    assert.equal(off.poolStats!().prepared, 0);
  });

  test('prepared statement names: bounded, the same for the same text in every process, none without parameters or once lost', () => {
    const one = new PreparedNames();
    const other = new PreparedNames();
    const text = 'SELECT value FROM settings WHERE key = $1';
    assert.equal(one.nameOf(text, 1), undefined);
    const name = one.nameOf(text, 1);
    assert.match(name ?? '', /^gk_[\w-]{27}$/);
    other.nameOf(text, 1);
    assert.equal(other.nameOf(text, 1), name, 'a hash of the text: two nodes never give one name two texts');
    assert.equal(one.nameOf('SELECT 1', 0), undefined);
    assert.equal(one.nameOf('SELECT 1', 0), undefined);
    for (let i = 0; i < MAX_NAMES + 100; i++) { one.nameOf(`SELECT ${i} WHERE $1`, 1); one.nameOf(`SELECT ${i} WHERE $1`, 1); }
    assert.equal(one.size, MAX_NAMES);
    assert.equal(one.nameOf(text, 1), name, 'a named text keeps its name');
    assert.equal(one.lost(Object.assign(new Error('x'), { code: '23505' })), false);
    assert.equal(one.lost(Object.assign(new Error('prepared statement does not exist'), { code: '26000' })), true);
    assert.deepEqual([one.size, one.enabled, one.nameOf(text, 1)], [0, false, undefined]);
  });

  test('GRIDKEEPER_DATABASE_POOL / --database-pool: the size of the node\'s pool, 1..1000, default 10', async (t) => {
    assert.equal(parseConfig({}, []).config.databasePool, 10);
    assert.equal(parseConfig({ GRIDKEEPER_DATABASE_POOL: '25' }, []).config.databasePool, 25);
    assert.equal(parseConfig({ GRIDKEEPER_DATABASE_POOL: '25' }, ['--database-pool', '3']).config.databasePool, 3);
    for (const bad of ['0', '1001', 'x', '-1', '2.5']) {
      assert.throws(() => parseConfig({ GRIDKEEPER_DATABASE_POOL: bad }, []), (err: unknown) =>
        err instanceof ConfigError && /GRIDKEEPER_DATABASE_POOL \/ --database-pool: expected an integer from 1 to 1000/.test(err.message), bad);
    }
    const dataDir = mkdtempSync(join(tmpdir(), 'gk-pool-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const url = await emptyDatabase(t);
    const db = openConfiguredDatabase(parseConfig({ GRIDKEEPER_DATABASE_URL: url, GRIDKEEPER_DATABASE_POOL: '3', GRIDKEEPER_DATA_DIR: dataDir }, []).config);
    t.after(() => db.close());
    // six statements at once on a pool of three: three connections open, the rest wait their turn
    await Promise.all(Array.from({ length: 6 }, () => db.get(sql`SELECT pg_sleep(0.05)`)));
    assert.deepEqual([db.poolStats!().size, db.poolStats!().open], [3, 3]);
  });
});
