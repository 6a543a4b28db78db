// The scanner's fast paths against their definitions: floats equal Number(text), integers their exact value, random
// points survive a write/parse round trip, and a line's series section is recognised by its text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseLineProtocol, type FieldValue } from '../../src/telemetry/line-protocol/line-protocol.ts';
import { LineScanner, parseFloatToken } from '../../src/telemetry/line-protocol/line-scanner.ts';
import { nulLine } from '../../src/telemetry/line-protocol/write-request.ts';
import { decodeUtf8, decodeUtf8Lines, LINE_PIECE_BYTES } from '../../src/http/route.ts';
import { ApiError } from '../../src/http/errors.ts';

const NOW = 1_767_225_600_000;
const field = (text: string): FieldValue => parseLineProtocol(`m,nodeId=n x=${text}`, { precision: 'ns', nowMs: NOW })[0].fields.x;

/** Float texts in the forms writers produce: shortest round-trip, fixed, exponent, long and zero-padded mantissas. */
const floatText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.tuple(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.integer({ min: 0, max: 20 })).map(([d, n]) => d.toFixed(n)),
  fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 20 })).map(([d, n]) => d.toExponential(n)),
  fc.tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,25}$/), fc.stringMatching(/^[0-9]{0,25}$/)).map(([neg, a, b]) => `${neg ? '-' : ''}${a}.${b}`),
  fc.tuple(fc.stringMatching(/^[0-9]{0,3}$/), fc.stringMatching(/^[0-9]{1,17}$/)).map(([a, b]) => `${a}.${b}`),
  fc.stringMatching(/^-?[0-9]{1,20}$/),
);

describe('line scanner: numbers', () => {
  it('reads every float exactly as Number() does', () => {
    fc.assert(fc.property(floatText, (text) => {
      const want = Number(text);
      fc.pre(Number.isFinite(want));
      assert.ok(Object.is(parseFloatToken(text, 0, text.length), want), text);
      const got = field(text);
      assert.equal(got.type, 'float');
      assert.ok(Object.is(got.value, want), `${text}: ${String(got.value)} vs ${want}`);
    }), { numRuns: 5000 });
  });

  it('reads integers exactly, with and without the 15-digit fast path', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    fc.assert(fc.property(int64, fc.integer({ min: 0, max: 3 }), (v, zeros) => {
      const text = v < 0n ? `-${'0'.repeat(zeros)}${-v}` : `${'0'.repeat(zeros)}${v}`;
      assert.deepEqual(field(`${text}i`), { type: 'integer', value: v });
      if (v >= 0n) assert.deepEqual(field(`${text}u`), { type: 'unsigned', value: v });
    }), { numRuns: 3000 });
  });

  it('finds duplicate fields whatever keys earlier lines left behind', () => {
    const parse = (body: string) => parseLineProtocol(body, { precision: 'ns', nowMs: NOW });
    assert.throws(() => parse('m,nodeId=n a=1,b=2\nm,nodeId=n b=1\nm,nodeId=n b=1,b=2'), /^LineProtocolError: line 3: duplicate field "b"$/);
    assert.throws(() => parse('m,nodeId=n a=1,b=2\nm,nodeId=n a=1,a=2'), /^LineProtocolError: line 2: duplicate field "a"$/);
    assert.throws(() => parse('m,nodeId=n a=1,b=2,c=3\nm,nodeId=n c=1\nm,nodeId=n c=1,b=1,c=2'), /line 3: duplicate field "c"/);
    fc.assert(fc.property(fc.array(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }), (lines) => {
      const body = lines.map((keys) => `m,nodeId=n ${keys.map((k, i) => `${k}=${i}`).join(',')}`).join('\n');
      const bad = lines.findIndex((keys) => new Set(keys).size < keys.length);
      if (bad < 0) assert.equal(parse(body).length, lines.length);
      else assert.throws(() => parse(body), (err: Error) => err.message.startsWith(`line ${bad + 1}: duplicate field`));
    }), { numRuns: 2000 });
  });

  it('keeps the reference errors for everything the fast path declines', () => {
    const cases: Array<[string, RegExp]> = [
      ['1.2.3', /bad value/], ['1e', /bad value/], ['--1', /bad value/], ['1-', /bad value/], ['.', /bad value/],
      ['1.5i', /bad integer/], ['-1u', /bad integer/], ['1ii', /bad integer/], ['12ix', /bad value/], ['1\t2', /bad value/],
    ];
    for (const [text, reason] of cases) {
      assert.throws(() => field(text), (err: Error) => reason.test(err.message), text);
    }
  });
});

/** Names using every character the escapes are about. */
const name = fc.stringMatching(/^[a-z ,=\\"#A-Z0-9_é]{1,8}$/).filter((s) => !s.endsWith('\\') && !s.startsWith('#') && !s.startsWith(' '));
const escapeName = (s: string, eq: boolean) => s.replace(eq ? /[ ,=]/g : /[ ,]/g, (c) => `\\${c}`);
const value = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((v): FieldValue => ({ type: 'float', value: v })),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v): FieldValue => ({ type: 'integer', value: v })),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((v): FieldValue => ({ type: 'unsigned', value: v })),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes('\n') && !s.includes('\r')).map((v): FieldValue => ({ type: 'string', value: v })),
  fc.boolean().map((v): FieldValue => ({ type: 'boolean', value: v })),
);
const valueText = (f: FieldValue) => {
  switch (f.type) {
    case 'float': return Object.is(f.value, -0) ? '-0' : String(f.value); // String(-0) is "0"
    case 'integer': return `${f.value}i`;
    case 'unsigned': return `${f.value}u`;
    case 'string': return `"${f.value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    case 'boolean': return f.value ? 'true' : 'F';
  }
};
// A measurement with `\` before a character that is not special keeps it; names here avoid a trailing backslash,
// and a backslash right before an escaped character is ambiguous in the protocol itself, so it is left out.
const clean = (s: string) => !/\\[ ,="\\]/.test(s);
const point = fc.record({
  measurement: name.filter(clean),
  tags: fc.uniqueArray(fc.tuple(name.filter(clean), name.filter(clean)), { selector: ([k]) => k, maxLength: 3 }),
  fields: fc.uniqueArray(fc.tuple(name.filter(clean), value), { selector: ([k]) => k, minLength: 1, maxLength: 4 }),
  timeNs: fc.option(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), { nil: undefined }),
});

describe('line scanner: round trip', () => {
  it('parses back what a writer escapes, line after line', () => {
    fc.assert(fc.property(fc.array(point, { minLength: 1, maxLength: 6 }), (points) => {
      const lines = points.map((p) => {
        const tags = p.tags.filter(([k]) => k !== 'nodeId');
        const series = [escapeName(p.measurement, false), ...[['nodeId', 'n'] as const, ...tags].map(([k, v]) => `${escapeName(k, true)}=${escapeName(v, true)}`)].join(',');
        const fields = p.fields.map(([k, v]) => `${escapeName(k, true)}=${valueText(v)}`).join(',');
        return `${series} ${fields}${p.timeNs === undefined ? '' : ` ${p.timeNs}`}`;
      });
      const parsed = parseLineProtocol(lines.join('\n'), { precision: 'ns', nowMs: NOW });
      assert.equal(parsed.length, points.length);
      parsed.forEach((got, i) => {
        const p = points[i];
        assert.equal(got.measurement, p.measurement);
        assert.deepEqual({ ...got.tags }, Object.fromEntries([['nodeId', 'n'], ...p.tags.filter(([k]) => k !== 'nodeId')]));
        assert.deepEqual({ ...got.fields }, Object.fromEntries(p.fields));
        if (p.timeNs !== undefined) assert.equal(BigInt(got.timeMs) * 1_000_000n + BigInt(got.subMsNs), p.timeNs);
      });
    }), { numRuns: 1500 });
  });
});

describe('line scanner: series sections', () => {
  it('hashes and matches a line\'s series section by its text, escapes included', () => {
    const body = 'm,nodeId=a x=1\nm,nodeId=a x=2 5\nm\\ x,nodeId=a y=1\nm,nodeId=b x=1\n  m,nodeId=a   x=3';
    const sc = new LineScanner(body, { precision: 'ns', nowMs: NOW });
    const seen: Array<[string, number]> = [];
    while (sc.nextLine()) seen.push([sc.seriesText(), sc.seriesHash]);
    assert.deepEqual(seen.map(([text]) => text), ['m,nodeId=a', 'm,nodeId=a', 'm\\ x,nodeId=a', 'm,nodeId=b', 'm,nodeId=a']);
    assert.equal(seen[0][1], seen[1][1]);
    assert.equal(seen[0][1], seen[4][1]);
    assert.notEqual(seen[0][1], seen[3][1]);
    assert.ok(seen.every(([, h]) => Number.isInteger(h) && h >= 0 && h < 2 ** 30));
    const again = new LineScanner(body, { precision: 'ns', nowMs: NOW });
    again.nextLine();
    assert.equal(again.seriesTextIs('m,nodeId=a'), true);
    assert.equal(again.seriesTextIs('m,nodeId=ab'), false);
    assert.equal(again.seriesTextIs('m,nodeId=b'), false);
  });
});

describe('line scanner: bodies in pieces', () => {
  // Lines of every kind the scanner distinguishes: points, comments, blank and CRLF lines, malformed lines, a NUL.
  const lineText = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.integer({ min: 0, max: 3 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 1e12 }))
      .map(([n, v, t]) => `m,nodeId=n${n} x=${v},y=${n}i ${t}`) },
    { weight: 1, arbitrary: fc.constantFrom('# a comment', '', '   ', 'm,nodeId=é x="ü\u{1F600}" 5', '\uFEFFm,nodeId=n x=1 7', 'm,nodeId=n x=1 5\r') },
    { weight: 1, arbitrary: fc.constantFrom('m,nodeId=n x=', 'no fields', 'm,nodeId=n x=1 notatime', 'm,nodeId=n x="a\u0000b" 1', '# nul \u0000 in a comment') },
  );
  const outcome = (body: string | readonly string[]) => {
    try {
      return { points: parseLineProtocol(body, { precision: 'ns', nowMs: NOW }) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  };

  it('reads a body cut at its line breaks exactly as the whole text: points, line numbers of errors, NUL lines', () => {
    fc.assert(fc.property(fc.array(lineText, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (lines, cuts, trailing) => {
      const whole = lines.join('\n') + (trailing ? '\n' : '');
      // each cut falls after a line break: pieces end with '\n', the last one aside
      const breaks = [...whole.matchAll(/\n/g)].map((m) => m.index + 1);
      const at = [...new Set(cuts.filter(() => breaks.length > 0).map((c) => breaks[c % breaks.length]))].sort((a, b) => a - b);
      const pieces = [0, ...at].map((from, i) => whole.slice(from, i < at.length ? at[i] : whole.length));
      assert.equal(pieces.join(''), whole);
      assert.deepEqual(outcome(pieces), outcome(whole));
      assert.equal(nulLine(pieces), nulLine([whole]));
    }), { numRuns: 2000 });
  });

  it('decodes a body into pieces of at most about 32 KB that end at line breaks and join to the whole text', () => {
    const line = (i: number) => `m,nodeId=n${i % 7},site=é\u{1F600} x=${i}.5 ${1_000_000 + i}`;
    const text = '\uFEFF' + Array.from({ length: 4000 }, (_, i) => line(i)).join('\n') + '\n\uFEFFm,nodeId=n x=1 9\n';
    const bytes = new TextEncoder().encode(text);
    const pieces = decodeUtf8Lines([bytes]);
    // the same text arriving in chunks of any size, cut anywhere (inside a character too)
    for (const size of [1, 7, 4096, 65536, 100_000]) {
      const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      const got = decodeUtf8Lines(chunks);
      assert.equal(got.join(''), text.slice(1), `chunks of ${size}`);
      for (const piece of got.slice(0, -1)) assert.ok(piece.endsWith('\n'), `chunks of ${size}`);
    }
    assert.ok(pieces.length > 4, `${pieces.length} pieces`);
    for (const piece of pieces.slice(0, -1)) {
      assert.ok(piece.endsWith('\n'));
      assert.ok(Buffer.byteLength(piece) <= LINE_PIECE_BYTES + 200, `${Buffer.byteLength(piece)} bytes`);
    }
    // the leading byte order mark goes (as TextDecoder drops it), a U+FEFF inside the text stays
    assert.equal(pieces.join(''), text.slice(1));
    assert.equal(pieces.join(''), decodeUtf8(new TextEncoder().encode(text)));
    const points = parseLineProtocol(pieces, { precision: 'ns', nowMs: NOW });
    assert.equal(points.length, 4001);
    assert.equal(points[4000].measurement, '\uFEFFm');
    assert.throws(() => parseLineProtocol(pieces.concat('m,nodeId=n x= 9'), { precision: 'ns', nowMs: NOW }), /line 4002:/);
  });

  it('refuses invalid UTF-8 wherever it is, also in a later piece, and a body that ends inside a character', () => {
    const good = new TextEncoder().encode(Array.from({ length: 3000 }, (_, i) => `m,nodeId=n x=${i} ${i}`).join('\n'));
    for (const bad of [[0xff], [0xc3, 0x28], [0xe2, 0x82]]) {
      for (const where of [0, 1000, good.length - 10, good.length]) {
        const bytes = new Uint8Array([...good.subarray(0, where), ...bad, ...good.subarray(where)]);
        assert.throws(() => decodeUtf8Lines([bytes.subarray(0, 777), bytes.subarray(777)]), (err: unknown) => err instanceof ApiError && err.code === 'BAD_REQUEST' && /invalid UTF-8/.test(err.message), `${bad} at ${where}`);
      }
    }
    assert.deepEqual(decodeUtf8Lines([]), []);
    assert.deepEqual(decodeUtf8Lines([new Uint8Array(0)]), []);
  });
});
