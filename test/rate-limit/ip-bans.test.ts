// IP bans as a pure module, on a fake clock: strikes only while a Retry-After is unexpired, 10 in 60 s → 300 s.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BAN_RULE, IpBans } from '../../src/rate-limit/ip-bans.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('ip bans', () => {
  it('an address never told to wait has no state and is never banned', () => {
    const bans = new IpBans();
    for (let i = 0; i < 100; i++) assert.equal(bans.admit('192.0.2.1', T0 + i), undefined);
    assert.equal(bans.size, 0);
  });

  it('the 10th request within 60 s while Retry-After has not elapsed starts a 300 s ban', () => {
    const bans = new IpBans();
    bans.noteRetryAfter('192.0.2.1', 30, T0);
    for (let i = 0; i < 9; i++) assert.equal(bans.admit('192.0.2.1', T0 + i * 1000), undefined, `request ${i}`);
    assert.deepEqual(bans.admit('192.0.2.1', T0 + 9000), { msLeft: 300_000, started: true });
    assert.deepEqual(bans.admit('192.0.2.1', T0 + 10_000), { msLeft: 299_000, started: false });
    assert.deepEqual(bans.admit('192.0.2.1', T0 + 308_999), { msLeft: 1, started: false });
    // other addresses are unaffected
    assert.equal(bans.admit('192.0.2.2', T0 + 10_000), undefined);
    // the ban ends; the address starts with a clean record
    assert.equal(bans.admit('192.0.2.1', T0 + 309_000), undefined);
    bans.noteRetryAfter('192.0.2.1', 60, T0 + 309_000);
    for (let i = 0; i < 9; i++) assert.equal(bans.admit('192.0.2.1', T0 + 310_000 + i), undefined);
    assert.equal(bans.admit('192.0.2.1', T0 + 310_009)?.started, true);
  });

  it('requests after the Retry-After has elapsed are not strikes', () => {
    const bans = new IpBans();
    bans.noteRetryAfter('192.0.2.1', 5, T0);
    for (let i = 0; i < 9; i++) bans.admit('192.0.2.1', T0 + i);
    // the deadline is T0 + 5000: from then on the client is allowed to come back, as often as it likes
    for (let i = 0; i < 50; i++) assert.equal(bans.admit('192.0.2.1', T0 + 5000 + i), undefined);
    // one request before it would have been the 10th
    const other = new IpBans();
    other.noteRetryAfter('192.0.2.1', 5, T0);
    for (let i = 0; i < 9; i++) other.admit('192.0.2.1', T0 + i);
    assert.equal(other.admit('192.0.2.1', T0 + 4999)?.started, true);
  });

  it('strikes older than 60 s no longer count; a later Retry-After extends, never shortens, the deadline', () => {
    const bans = new IpBans();
    bans.noteRetryAfter('192.0.2.1', 60, T0);
    bans.noteRetryAfter('192.0.2.1', 1, T0); // shorter: ignored
    for (let i = 0; i < 9; i++) assert.equal(bans.admit('192.0.2.1', T0 + i * 6000), undefined); // T0 .. T0+48 s
    bans.noteRetryAfter('192.0.2.1', 60, T0 + 50_000);
    // at T0+60 s the first strike (T0) is exactly 60 s old: it drops out, so this is the 9th in the window
    assert.equal(bans.admit('192.0.2.1', T0 + 60_000), undefined);
    assert.equal(bans.admit('192.0.2.1', T0 + 60_001)?.started, true); // strikes at 6 s .. 60.001 s: 10 within 60 s
  });

  it('rule figures of docs/api.md#ip-bans', () => {
    assert.deepEqual(BAN_RULE, { strikes: 10, strikeWindowMs: 60_000, banMs: 300_000 });
  });

  it('state goes back down: entries expire once deadline, strikes and ban are over', () => {
    const bans = new IpBans({ sweepIntervalMs: 10_000 });
    for (let i = 0; i < 2000; i++) bans.noteRetryAfter(`10.0.${i >> 8}.${i & 255}`, 1 + (i % 60), T0);
    bans.noteRetryAfter('192.0.2.1', 1, T0);
    for (let i = 0; i < 10; i++) bans.admit('192.0.2.1', T0 + i); // banned until T0 + 300 009
    assert.equal(bans.size, 2001);
    bans.admit('203.0.113.9', T0 + 60_000); // deadlines (≤ 60 s) are over; strikes of the banned address were cleared
    assert.equal(bans.size, 1);
    bans.admit('203.0.113.9', T0 + 300_008);
    assert.equal(bans.size, 1);
    bans.admit('203.0.113.9', T0 + 310_008); // the next sweep is due 10 s after the last
    assert.equal(bans.size, 0);
  });

  it('an address with recent strikes is kept until they are 60 s old', () => {
    const bans = new IpBans({ sweepIntervalMs: 1 });
    bans.noteRetryAfter('192.0.2.1', 2, T0);
    bans.admit('192.0.2.1', T0 + 1000); // one strike
    bans.admit('x', T0 + 30_000);
    assert.equal(bans.size, 1);
    bans.admit('x', T0 + 61_000);
    assert.equal(bans.size, 0);
  });

  it('the size cap holds', () => {
    const bans = new IpBans({ maxEntries: 500 });
    for (let i = 0; i < 5000; i++) {
      bans.noteRetryAfter(`ip${i}`, 60, T0);
      assert.ok(bans.size <= 500);
    }
  });
});
