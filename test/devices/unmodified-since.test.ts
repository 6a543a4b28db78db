import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnmodifiedSince } from '../../src/devices/unmodified-since.ts';

const NOW = Date.UTC(2026, 0, 1);
const parse = (s: string) => parseUnmodifiedSince(s, NOW);

describe('If-Unmodified-Since parsing', () => {
  it('ISO 8601 date-times with a zone, with or without fractions', () => {
    assert.equal(parse('2026-01-02T03:04:05.678Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    assert.equal(parse('2026-01-02T03:04:05Z'), Date.UTC(2026, 0, 2, 3, 4, 5));
    assert.equal(parse('2026-01-02T03:04:05.6Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 600));
    assert.equal(parse('2026-01-02T03:04:05.123456789Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 123));
    assert.equal(parse('2026-01-02T05:04:05.678+02:00'), Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    assert.equal(parse('2026-01-01T20:00:00-0730'), Date.UTC(2026, 0, 2, 3, 30));
    assert.equal(parse(' 2026-01-02t03:04:05z '), Date.UTC(2026, 0, 2, 3, 4, 5));
  });

  it('the three HTTP-date forms of RFC 9110, always GMT', () => {
    const t = Date.UTC(1994, 10, 6, 8, 49, 37);
    assert.equal(parse('Sun, 06 Nov 1994 08:49:37 GMT'), t);
    assert.equal(parse('Sunday, 06-Nov-94 08:49:37 GMT'), t);
    assert.equal(parse('Sun Nov  6 08:49:37 1994'), t);
    assert.equal(parse('Thu Dec 31 23:59:59 2025'), Date.UTC(2025, 11, 31, 23, 59, 59));
    // rfc850 two-digit years more than 50 years ahead belong to the past century
    assert.equal(parse('Thursday, 01-Jan-70 00:00:00 GMT'), Date.UTC(2070, 0, 1));
    assert.equal(parse('Friday, 01-Jan-77 00:00:00 GMT'), Date.UTC(1977, 0, 1));
  });

  it('refuses anything else, including impossible dates and zone-less times', () => {
    for (const s of ['', 'now', '2026-01-01', '2026-01-01T00:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z',
      '2026-01-01T24:00:00Z', '2026-01-01T00:00:00+25:00', 'Sun, 06 Nov 1994 08:49:37 CET', 'Sun, 31 Nov 1994 08:49:37 GMT',
      'Sun, 6 Nov 1994 08:49:37 GMT', '1767225600000', 'Sun Nov 6 08:49:37 1994']) {
      assert.equal(parse(s), undefined, s);
    }
  });
});
