import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineProtocolError, parseLineProtocol, pointTimeNs, scanLineProtocol } from '../../src/telemetry/line-protocol/line-protocol.ts';
import type { ParsedPoint, Precision } from '../../src/telemetry/line-protocol/line-protocol.ts';

const NOW = 1_767_225_600_000;
const parse = (body: string, precision: Precision = 'ns') => parseLineProtocol(body, { precision, nowMs: NOW });
const one = (body: string, precision: Precision = 'ns'): ParsedPoint => {
  const points = parse(body, precision);
  assert.equal(points.length, 1);
  return points[0];
};
/** Plain copies, so deepEqual does not trip over the null-prototype records. */
const plain = (p: ParsedPoint) => ({ ...p, tags: { ...p.tags }, fields: { ...p.fields } });

function assertLineError(body: string, line: number, reason: RegExp, precision: Precision = 'ns') {
  assert.throws(() => parse(body, precision), (err: unknown) => {
    assert.ok(err instanceof LineProtocolError, `expected LineProtocolError, got ${String(err)}`);
    assert.equal(err.line, line);
    assert.match(err.message, new RegExp(`^line ${line}: `));
    assert.match(err.message, reason);
    return true;
  });
}

describe('line protocol: happy', () => {
  it('parses a full line with every field type', () => {
    const p = one('power,nodeId=n1,phase=L1 f=1.5,i=-12i,u=12u,s="hi there",b=true 1767225600123456789');
    assert.deepEqual(plain(p), {
      measurement: 'power',
      tags: { nodeId: 'n1', phase: 'L1' },
      fields: {
        f: { type: 'float', value: 1.5 },
        i: { type: 'integer', value: -12n },
        u: { type: 'unsigned', value: 12n },
        s: { type: 'string', value: 'hi there' },
        b: { type: 'boolean', value: true },
      },
      timeMs: 1_767_225_600_123,
      subMsNs: 456_789,
    });
    assert.equal(pointTimeNs(p), 1767225600123456789n);
  });

  it('accepts every boolean spelling', () => {
    const spellings = { t: true, T: true, true: true, True: true, TRUE: true, f: false, F: false, false: false, False: false, FALSE: false };
    for (const [text, value] of Object.entries(spellings)) {
      assert.deepEqual(one(`m,nodeId=n b=${text}`).fields.b, { type: 'boolean', value }, text);
    }
  });

  it('parses the float forms InfluxDB accepts', () => {
    const cases: Array<[string, number]> = [['1', 1], ['-1', -1], ['1.', 1], ['.5', 0.5], ['-.5', -0.5], ['1e3', 1000], ['1.5E-3', 0.0015], ['2e+2', 200], ['0', 0]];
    for (const [text, value] of cases) assert.deepEqual(one(`m,nodeId=n x=${text}`).fields.x, { type: 'float', value }, text);
  });

  it('parses integers at the int64 and uint64 limits', () => {
    const p = one('m,nodeId=n a=9223372036854775807i,b=-9223372036854775808i,c=18446744073709551615u,d=0u,e=-0i');
    assert.deepEqual({ ...p.fields }, {
      a: { type: 'integer', value: 9223372036854775807n },
      b: { type: 'integer', value: -9223372036854775808n },
      c: { type: 'unsigned', value: 18446744073709551615n },
      d: { type: 'unsigned', value: 0n },
      e: { type: 'integer', value: 0n },
    });
  });

  it('unescapes measurement, tag keys, tag values and field keys', () => {
    const p = one('my\\ meas\\,ure=x,nodeId=n,tag\\ key\\,a\\=b=va\\ l\\,u\\=e field\\ k\\=e\\,y=1i');
    assert.equal(p.measurement, 'my meas,ure=x');
    assert.deepEqual({ ...p.tags }, { nodeId: 'n', 'tag key,a=b': 'va l,u=e' });
    assert.deepEqual(Object.keys(p.fields), ['field k=e,y']);
  });

  it('keeps backslashes that escape nothing, and `\\=` in a measurement', () => {
    const p = one('a\\b\\=c,nodeId=x\\y f\\x=1');
    assert.equal(p.measurement, 'a\\b\\=c');
    assert.equal(p.tags.nodeId, 'x\\y');
    assert.deepEqual(Object.keys(p.fields), ['f\\x']);
  });

  it('reads quoted strings with spaces, commas, equals and escapes', () => {
    const p = one('m,nodeId=n s="a, b=c d",e="say \\"hi\\" \\\\ done",raw="back\\slash",empty="" 5');
    assert.deepEqual({ ...p.fields }, {
      s: { type: 'string', value: 'a, b=c d' },
      e: { type: 'string', value: 'say "hi" \\ done' },
      raw: { type: 'string', value: 'back\\slash' },
      empty: { type: 'string', value: '' },
    });
    assert.equal(p.timeMs, 0);
    assert.equal(p.subMsNs, 5);
  });

  it('skips blank lines and comments, accepts CRLF and surrounding blanks', () => {
    const body = '# header\r\n\r\n   \r\n  m,nodeId=a x=1 1000000\r\n\t# indented comment\nm,nodeId=b x=2   2000000  \r\n\n';
    const points = parse(body);
    assert.deepEqual(points.map((p) => [p.tags.nodeId, p.fields.x, p.timeMs]), [
      ['a', { type: 'float', value: 1 }, 1],
      ['b', { type: 'float', value: 2 }, 2],
    ]);
  });

  it('uses nowMs when the timestamp is missing', () => {
    const p = one('m,nodeId=n x=1');
    assert.equal(p.timeMs, NOW);
    assert.equal(p.subMsNs, 0);
    assert.equal(one('m,nodeId=n x=1 ').timeMs, NOW);
  });

  it('converts each precision exactly', () => {
    const cases: Array<[Precision, string, number, number]> = [
      ['ns', '1767225600123456789', 1_767_225_600_123, 456_789],
      ['us', '1767225600123456', 1_767_225_600_123, 456_000],
      ['ms', '1767225600123', 1_767_225_600_123, 0],
      ['s', '1767225600', 1_767_225_600_000, 0],
      ['ns', '0', 0, 0],
      ['ns', '000000000000000000000000012', 0, 12],
    ];
    for (const [precision, ts, timeMs, subMsNs] of cases) {
      const p = one(`m,nodeId=n x=1 ${ts}`, precision);
      assert.deepEqual([p.timeMs, p.subMsNs], [timeMs, subMsNs], `${precision} ${ts}`);
    }
  });

  it('floors negative timestamps to ms and keeps the exact ns', () => {
    const cases: Array<[Precision, string, number, number, bigint]> = [
      ['ns', '-1', -1, 999_999, -1n],
      ['ns', '-1000000', -1, 0, -1_000_000n],
      ['ns', '-1000001', -2, 999_999, -1_000_001n],
      ['us', '-1', -1, 999_000, -1000n],
      ['ms', '-5', -5, 0, -5_000_000n],
      ['s', '-2', -2000, 0, -2_000_000_000n],
      ['ns', '-0', 0, 0, 0n],
    ];
    for (const [precision, ts, timeMs, subMsNs, ns] of cases) {
      const p = one(`m,nodeId=n x=1 ${ts}`, precision);
      assert.deepEqual([p.timeMs, p.subMsNs, pointTimeNs(p)], [timeMs, subMsNs, ns], `${precision} ${ts}`);
      assert.ok(!Object.is(p.timeMs, -0));
    }
  });

  it('accepts the extreme valid timestamps of each precision', () => {
    assert.equal(pointTimeNs(one('m,nodeId=n x=1 9223372036854775806')), 9223372036854775806n);
    assert.equal(pointTimeNs(one('m,nodeId=n x=1 -9223372036854775806')), -9223372036854775806n);
    assert.equal(pointTimeNs(one('m,nodeId=n x=1 9223372036854775', 'us')), 9223372036854775000n);
    assert.equal(one('m,nodeId=n x=1 9223372036854', 'ms').timeMs, 9223372036854);
    assert.equal(one('m,nodeId=n x=1 -9223372036', 's').timeMs, -9223372036000);
  });

  it('treats __proto__ and constructor as plain keys, with nothing inherited', () => {
    const p = one('m,nodeId=n,__proto__=x,constructor=y toString=1');
    assert.deepEqual(Object.keys(p.tags), ['nodeId', '__proto__', 'constructor']);
    assert.equal(p.tags.__proto__, 'x');
    assert.equal(p.tags.constructor, 'y');
    assert.deepEqual(Object.keys(p.fields), ['toString']);
    const q = one('m,nodeId=n x=1');
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      assert.equal(name in q.tags, false, name);
      assert.equal(name in q.fields, false, name);
    }
  });

  it('reuses nothing wrongly across lines that differ in keys and values', () => {
    const points = parse('m,nodeId=a,x=1 f=1,g=2 1\nm,nodeId=b,y=1 g=2,f=1 2\nn,nodeId=b,y=10 g=3 3');
    assert.deepEqual(points.map((p) => [p.measurement, { ...p.tags }, Object.keys(p.fields)]), [
      ['m', { nodeId: 'a', x: '1' }, ['f', 'g']],
      ['m', { nodeId: 'b', y: '1' }, ['g', 'f']],
      ['n', { nodeId: 'b', y: '10' }, ['g']],
    ]);
  });

  it('streams the same points with their line numbers, and stops at the first bad line', () => {
    const body = '# c\nm,nodeId=a x=1 1\n\nm,nodeId=b x=2 2\n';
    const seen: Array<[ParsedPoint, number]> = [];
    assert.equal(scanLineProtocol(body, { precision: 'ns', nowMs: NOW }, (p, line) => { seen.push([p, line]); }), 2);
    assert.deepEqual(seen.map(([p, line]) => [p.tags.nodeId, line]), [['a', 2], ['b', 4]]);
    assert.deepEqual(seen.map(([p]) => plain(p)), parse(body).map(plain));
    // Points before the bad line were already handed out: the caller rolls back its transaction.
    const before: string[] = [];
    assert.throws(() => scanLineProtocol(body + 'bad', { precision: 'ns', nowMs: NOW }, (p) => { before.push(p.tags.nodeId); }), /^LineProtocolError: line 5: no fields$/);
    assert.deepEqual(before, ['a', 'b']);
  });

  it('returns nothing for an empty or comment-only body', () => {
    assert.deepEqual(parse(''), []);
    assert.deepEqual(parse('\n\n# only comments\r\n'), []);
  });
});

describe('line protocol: validation', () => {
  it('reports the first bad line with its 1-based number, counting blanks and comments', () => {
    assertLineError('m,nodeId=a x=1\n\n# c\nm,nodeId=b x=\nm,nodeId=c', 4, /missing value for field "x"/);
    assertLineError('m,nodeId=a x=1\r\n\r\nbroken', 3, /no fields/);
  });

  it('refuses a line without a nodeId tag', () => {
    assertLineError('m x=1', 1, /missing nodeId tag/);
    assertLineError('m,nodeId=a x=1\nm,node=b x=1', 2, /missing nodeId tag/);
    assertLineError('m,nodeid=a x=1', 1, /missing nodeId tag/);
  });

  it('refuses lines without fields', () => {
    assertLineError('m,nodeId=a', 1, /no fields/);
    assertLineError('m,nodeId=a   ', 1, /no fields/);
    assertLineError('m', 1, /no fields/);
  });

  it('refuses malformed measurements and tags', () => {
    assertLineError(',nodeId=a x=1', 1, /missing measurement/);
    assertLineError(' ,nodeId=a x=1', 1, /missing measurement/);
    assertLineError('m,nodeId x=1', 1, /tag without "="/);
    assertLineError('m,=a,nodeId=b x=1', 1, /empty tag key/);
    assertLineError('m,nodeId= x=1', 1, /empty value for tag "nodeId"/);
    assertLineError('m,nodeId=a=b x=1', 1, /unescaped "=" in the value of tag "nodeId"/);
    assertLineError('m,nodeId=a,,t=1 x=1', 1, /empty tag key/);
  });

  it('refuses duplicate tags and duplicate fields', () => {
    assertLineError('m,nodeId=a,nodeId=b x=1', 1, /duplicate tag "nodeId"/);
    assertLineError('m,nodeId=a x=1,x=2', 1, /duplicate field "x"/);
  });

  it('refuses bad field keys and values', () => {
    const bad: Array<[string, RegExp]> = [
      ['x', /field without "="/],
      ['=1', /empty field key/],
      ['x=1,', /empty field key/],
      ['x=abc', /bad value for field "x": abc/],
      ['x=tru', /bad value for field "x"/],
      ['x=1.5i', /bad integer for field "x"/],
      ['x=i', /bad integer/],
      ['x=-12u', /bad integer/],
      ['x=1.2.3', /bad value/],
      ['x=1e', /bad value/],
      ['x=-', /bad value/],
      ['x=+1', /bad value/],
      ['x=NaN', /bad value/],
      ['x=Inf', /bad value/],
      ['x=-Inf', /bad value/],
      ['x=1e400', /float out of range/],
      ['x=9223372036854775808i', /integer out of range/],
      ['x=-9223372036854775809i', /integer out of range/],
      ['x=18446744073709551616u', /integer out of range/],
      ['x="abc', /unterminated string for field "x"/],
      ['x="abc\\"', /unterminated string/],
      ['x="a"b', /unexpected text after the string/],
    ];
    for (const [fields, reason] of bad) assertLineError(`m,nodeId=n ${fields}`, 1, reason);
  });

  it('refuses a string that would continue on the next line', () => {
    assertLineError('m,nodeId=n x="abc\ndef" 1', 1, /unterminated string/);
  });

  it('refuses bad timestamps', () => {
    assertLineError('m,nodeId=n x=1 12a', 1, /bad timestamp: 12a/);
    assertLineError('m,nodeId=n x=1 -', 1, /bad timestamp/);
    assertLineError('m,nodeId=n x=1 1.5', 1, /bad timestamp/);
    assertLineError('m,nodeId=n x=1 +5', 1, /bad timestamp/);
    assertLineError('m,nodeId=n x=1 1 2', 1, /unexpected text after the timestamp/);
    assertLineError('m,nodeId=n x=1 y=2', 1, /bad timestamp/);
  });

  it('refuses timestamps outside InfluxDB range, per precision', () => {
    assertLineError('m,nodeId=n x=1 9223372036854775807', 1, /timestamp out of range/);
    assertLineError('m,nodeId=n x=1 -9223372036854775807', 1, /timestamp out of range/);
    assertLineError('m,nodeId=n x=1 99999999999999999999', 1, /timestamp out of range/);
    assertLineError('m,nodeId=n x=1 9223372036854776', 1, /timestamp out of range/, 'us');
    assertLineError('m,nodeId=n x=1 9223372036855', 1, /timestamp out of range/, 'ms');
    assertLineError('m,nodeId=n x=1 9223372037', 1, /timestamp out of range/, 's');
  });
});
