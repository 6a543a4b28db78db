// The InfluxQL parser: tokens, precedence, quoting, regex literals, durations, comments, bound parameters, and
// InfluxDB-like error messages; and the checks of a SELECT before it runs (validate.ts), in InfluxDB's words.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery, ParseError } from '../../src/influxql/parser.ts';
import type { Expr, SelectStatement } from '../../src/influxql/ast.ts';
import { validateSelect } from '../../src/influxql/validate.ts';
import { StatementError } from '../../src/influxql/errors.ts';

const select = (q: string, params = {}) => parseQuery(q, params)[0] as SelectStatement;

/** An expression as fully parenthesised text, to check the tree shape. */
function show(e: Expr | undefined): string {
  if (e === undefined) return '';
  switch (e.kind) {
    case 'binary': return `(${show(e.lhs)} ${e.op} ${show(e.rhs)})`;
    case 'paren': return show(e.expr);
    case 'var': return e.cast ? `${e.name}::${e.cast}` : e.name;
    case 'call': return `${e.name}(${e.args.map(show).join(', ')})`;
    case 'regex': return `/${e.source}/`;
    case 'string': return `'${e.value}'`;
    case 'duration': return `${e.ns}ns`;
    case 'wildcard': return '*';
    default: return String((e as { value: unknown }).value);
  }
}

describe('influxql parser', () => {
  test('precedence: * over +, + over comparisons, comparisons over AND, AND over OR', () => {
    const s = select('SELECT a + b * c - d FROM m WHERE x = 1 OR y > 2 + 3 AND z != \'q\'');
    assert.equal(show(s.fields[0].expr), '((a + (b * c)) - d)');
    assert.equal(show(s.condition), '((x = 1) OR ((y > (2 + 3)) AND (z != \'q\')))');
  });

  test('parentheses override precedence', () => {
    assert.equal(show(select('SELECT (a + b) * c FROM m').fields[0].expr), '((a + b) * c)');
    assert.equal(show(select('SELECT v FROM m WHERE (a = 1 OR b = 2) AND c = 3').condition), '(((a = 1) OR (b = 2)) AND (c = 3))');
  });

  test('quoting: double-quoted identifiers (keywords, spaces, escapes), single-quoted strings', () => {
    const s = select(`SELECT "select", "with space", "esc\\"aped" FROM "db"."rp"."my measurement" WHERE "tag" = 'it\\'s'`);
    assert.deepEqual(s.fields.map((f) => show(f.expr)), ['select', 'with space', 'esc"aped']);
    assert.deepEqual(s.sources, [{ database: 'db', retentionPolicy: 'rp', name: 'my measurement' }]);
    assert.equal(show(s.condition), "(tag = 'it's')");
  });

  test('sources: db..m, rp.m, regex, several', () => {
    const s = select('SELECT v FROM db..m, rp.n, /^cpu.*/, "db"."rp"./x/');
    assert.equal(s.sources.length, 4);
    assert.deepEqual(s.sources[0], { database: 'db', name: 'm' });
    assert.deepEqual(s.sources[1], { retentionPolicy: 'rp', name: 'n' });
    assert.equal(s.sources[2].regex!.source, '^cpu.*');
    assert.equal(s.sources[3].database, 'db');
    assert.equal(s.sources[3].regex!.source, 'x');
  });

  test('regex literals after =~ and !~ (with escaped slashes), division elsewhere', () => {
    const s = select('SELECT a / 2 FROM m WHERE host =~ /^a\\/b$/ AND dc !~ /x|y/');
    assert.equal(show(s.fields[0].expr), '(a / 2)');
    assert.equal(show(s.condition), '((host =~ /^a/b$/) AND (dc !~ /x|y/))');
    assert.ok((s.condition as any).lhs.rhs.re.test('a/b'));
  });

  test('durations in every unit; epoch integers with a unit; now() arithmetic', () => {
    const s = select('SELECT mean(v) FROM m WHERE time >= 1700000000000ms AND time < now() - 1h GROUP BY time(10s, 5m) fill(previous)');
    assert.equal(show(s.condition), '((time >= 1700000000000000000ns) AND (time < (now() - 3600000000000ns)))');
    assert.deepEqual(s.dimensions, [{ kind: 'time', intervalNs: 10e9, offsetNs: 300e9 }]);
    assert.deepEqual(s.fill, { mode: 'previous' });
    const units: [string, number][] = [['1ns', 1], ['1u', 1e3], ['1µ', 1e3], ['1ms', 1e6], ['1s', 1e9], ['1m', 60e9], ['1h', 3600e9], ['1d', 86400e9], ['1w', 604800e9]];
    for (const [text, ns] of units) assert.deepEqual(select(`SELECT v FROM m WHERE time > now() - ${text}`).condition, {
      kind: 'binary', op: '>', lhs: { kind: 'var', name: 'time' }, rhs: { kind: 'binary', op: '-', lhs: { kind: 'call', name: 'now', args: [] }, rhs: { kind: 'duration', ns } },
    }, text);
  });

  test('comments and several statements', () => {
    const list = parseQuery('-- a comment\nSELECT v FROM m; /* block\ncomment */ SHOW DATABASES;;');
    assert.deepEqual(list.map((s) => s.kind), ['select', 'show']);
  });

  test('casts, aliases, wildcards, functions with arguments', () => {
    const s = select('SELECT v::field AS x, h::tag, *::field, percentile("v", 95), top(v, 3), integral(v, 1m) FROM m');
    assert.deepEqual(s.fields.map((f) => [show(f.expr), f.alias]), [
      ['v::field', 'x'], ['h::tag', undefined], ['*', undefined], ['percentile(v, 95)', undefined], ['top(v, 3)', undefined], ['integral(v, 60000000000ns)', undefined],
    ]);
  });

  test('distinct is a keyword and a function; time(0s) groups nothing by time', () => {
    const s = select('SELECT distinct(state), count(DISTINCT("v")) FROM m GROUP BY time(0s), host');
    assert.deepEqual(s.fields.map((f) => show(f.expr)), ['distinct(state)', 'count(distinct(v))']);
    assert.deepEqual(s.dimensions, [{ kind: 'tag', name: 'host' }]);
    assert.throws(() => parseQuery('SELECT mean(v) FROM m GROUP BY time(-1m)'), ParseError);
  });

  test('a SELECT InfluxDB refuses before reading is refused with its message', () => {
    const cases: [string, string][] = [
      ['SELECT v FROM m GROUP BY time(1m)', 'GROUP BY requires at least one aggregate function'],
      ['SELECT count(v) FROM m GROUP BY time(1m), time(2m)', 'multiple time dimensions not allowed'],
      ['SELECT time FROM m', 'at least 1 non-time field must be queried'],
      ['SELECT count() FROM m', 'invalid number of arguments for count, expected 1, got 0'],
      ['SELECT mean(v, 2) FROM m', 'invalid number of arguments for mean, expected 1, got 2'],
      ['SELECT percentile(v) FROM m', 'invalid number of arguments for percentile, expected 2, got 1'],
      ['SELECT top(v) FROM m', 'invalid number of arguments for top, expected at least 2, got 1'],
      ['SELECT derivative(mean(v), 1m, 2) FROM m GROUP BY time(1m)', 'invalid number of arguments for derivative, expected at least 1 but no more than 2, got 3'],
      ['SELECT moving_average(v, 1) FROM m', 'moving_average window must be greater than 1, got 1'],
      ['SELECT distinct(*) FROM m', 'expected field argument in distinct()'],
      ['SELECT elapsed(mean(v), 1m) FROM m', 'elapsed aggregate requires a GROUP BY interval'],
      ['SELECT max(v) + sum(count(v)) FROM m GROUP BY time(1m), time(1h)', 'multiple time dimensions not allowed'],
      ['SELECT mean(v), w FROM m', 'mixing aggregate and non-aggregate queries is not supported'],
      ['SELECT max(v), min(v), host FROM m', 'mixing multiple selector functions with tags or fields is not supported'],
      ['SELECT last(v) + last(v), w FROM m', 'mixing multiple selector functions with tags or fields is not supported'],
      ['SELECT max(v), mean(v), w FROM m', 'mixing aggregate and non-aggregate queries is not supported'],
      ['SELECT distinct(v), count(v) FROM m', 'aggregate function distinct() cannot be combined with other functions or fields'],
      ['SELECT top(v, 1), bottom(v, 1) FROM m', 'selector function top() cannot be combined with other functions'],
      ['SELECT difference(bottom(v, 2)) FROM m GROUP BY time(1m)', 'selector function bottom() cannot be combined with other functions'],
      ['SELECT top(v, 3) FROM m LIMIT 2', 'limit (3) in top function can not be larger than the LIMIT (2) in the select statement'],
    ];
    for (const [q, message] of cases) {
      assert.throws(() => validateSelect(select(q)), (err: Error) => err instanceof StatementError && err.message === message, q);
    }
    for (const q of ['SELECT mean(v) FROM m GROUP BY time(1m)', 'SELECT max(v), w, host FROM m', 'SELECT derivative(mean(v), 1m) FROM m GROUP BY time(1m)', 'SELECT v, w FROM m']) {
      assert.doesNotThrow(() => validateSelect(select(q)), q);
    }
  });

  test('GROUP BY tags, *, regex; ORDER BY, LIMIT, OFFSET, SLIMIT, SOFFSET, tz', () => {
    const s = select("SELECT v FROM m GROUP BY \"host\", *, /^dc/ ORDER BY time DESC LIMIT 10 OFFSET 2 SLIMIT 3 SOFFSET 1 tz('Europe/Brussels')");
    assert.deepEqual(s.dimensions.map((d) => d.kind), ['tag', 'wildcard', 'regex']);
    assert.deepEqual([s.desc, s.limit, s.offset, s.slimit, s.soffset, s.tz], [true, 10, 2, 3, 1, 'Europe/Brussels']);
  });

  test('bound parameters become literals', () => {
    const s = select('SELECT v FROM m WHERE host = $host AND v > $min AND ok = $ok', { host: 'a', min: 1.5, ok: true });
    assert.equal(show(s.condition), "(((host = 'a') AND (v > 1.5)) AND (ok = true))");
    assert.throws(() => select('SELECT v FROM m WHERE host = $nope'), /missing parameter: nope/);
  });

  test('keywords are case-insensitive', () => {
    assert.equal(parseQuery('select v from m where time > now() - 1h group by time(1m) order by time desc limit 1').length, 1);
  });

  test('SHOW statements', () => {
    const list = parseQuery('SHOW DATABASES; SHOW RETENTION POLICIES ON db; SHOW MEASUREMENTS WITH MEASUREMENT =~ /e/ WHERE a = \'b\' LIMIT 2; '
      + 'SHOW TAG KEYS FROM m; SHOW TAG VALUES FROM m WITH KEY IN ("a", "b"); SHOW TAG VALUES WITH KEY =~ /x/; SHOW FIELD KEYS FROM m; SHOW SERIES FROM m WHERE a = \'b\'');
    assert.deepEqual(list.map((s) => (s.kind === 'show' ? s.what : s.kind)), [
      'databases', 'retention policies', 'measurements', 'tag keys', 'tag values', 'tag values', 'field keys', 'series',
    ]);
  });

  test('statements that are parsed but not run', () => {
    const list = parseQuery('CREATE DATABASE x; DROP SERIES FROM /a/; SHOW USERS; SELECT v INTO n FROM m');
    assert.deepEqual(list.map((s) => s.kind), ['unsupported', 'unsupported', 'unsupported', 'select']);
    assert.equal((list[3] as SelectStatement).into, 'n');
  });

  test('errors say what was found, what was expected, and where', () => {
    const cases: [string, string][] = [
      ['SELECT', 'found EOF, expected identifier, string, number, bool at line 1, char 7'],
      ['SELECT v FROM', 'found EOF, expected identifier, regex at line 1, char 14'],
      ['SELECT v FROM m WHERE', 'found EOF, expected identifier, string, number, bool at line 1, char 22'],
      ['SELEKT v FROM m', 'found SELEKT, expected SELECT, DELETE, SHOW, CREATE, DROP, EXPLAIN, GRANT, REVOKE, ALTER, SET, KILL at line 1, char 1'],
      ['SELECT v FROM m\nGROUP BY time(', 'found EOF, expected duration at line 2, char 15'],
      ["SELECT v FROM m WHERE a = 'open", "found 'open, expected string (unterminated quote) at line 1, char 27"],
      ['SELECT v FROM m LIMIT x', 'found x, expected integer at line 1, char 23'],
      ['SELECT v FROM m; SHOW NOTHING', 'found NOTHING, expected DATABASES, FIELD, MEASUREMENTS, RETENTION, SERIES, TAG at line 1, char 23'],
      ['SELECT v FROM m GROUP BY time(1m) fill(sometimes)', 'found sometimes, expected null, none, previous, linear, number at line 1, char 40'],
      // comparisons and logic belong to WHERE: the outermost, left first, at the field's start (InfluxDB 1.6's words)
      ['SELECT v > 1 FROM m', 'invalid operator > in SELECT clause at line 1, char 8; operator is intended for WHERE clause'],
      ['SELECT v, (w + 1 = 2) * 3 AS x FROM m', 'invalid operator = in SELECT clause at line 1, char 11; operator is intended for WHERE clause'],
      ['SELECT mean(v =~ /a/ OR w) FROM m', 'invalid operator OR in SELECT clause at line 1, char 8; operator is intended for WHERE clause'],
      ['SELECT 2 * -distinct(v) FROM m', 'found DISTINCT, expected identifier, number, duration, ( at line 1, char 13'],
    ];
    for (const [q, message] of cases) {
      assert.throws(() => parseQuery(q), (err: Error) => err instanceof ParseError && err.message === message, q);
    }
  });
});
