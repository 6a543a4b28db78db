// The client address of a request: the socket's peer, or — only when the operator says a reverse proxy sits in front
// (GRIDKEEPER_TRUST_PROXY) — the first X-Forwarded-For entry. Without that setting the header is ignored: any client
// could otherwise pick its own address and walk around IP throttles and bans.
import type { Context } from 'hono';
import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Config } from '../lib/config.ts';

export function clientIp(c: Context, deps: { config: Pick<Config, 'trustProxy'> }): string {
  if (deps.config.trustProxy) {
    const forwarded = c.req.header('x-forwarded-for');
    const first = forwarded?.split(',')[0]?.trim();
    if (first && isIP(normalizeIp(first))) return normalizeIp(first);
  }
  // c.env is absent only when a request is handed to the app without a socket (app.request in a script)
  const address = c.env ? getConnInfo(c).remote.address : undefined;
  return address ? normalizeIp(address) : 'unknown';
}

/** `::ffff:1.2.3.4` (an IPv4 peer on a dual-stack socket) is `1.2.3.4`; IPv6 is lower-cased. */
export function normalizeIp(address: string): string {
  const a = address.toLowerCase();
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/**
 * The key an address is counted under by throttles: IPv4 as is, IPv6 by its /64 prefix (one subscriber usually holds
 * a whole /64, so counting single IPv6 addresses would give an attacker 2^64 fresh counters).
 */
export function ipThrottleKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head, tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  // an embedded IPv4 tail (::1.2.3.4) occupies two groups
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => (g === '' ? '0' : g.replace(/^0+(?=.)/, ''))).join(':')}::/64`;
}
