// Where a webhook may point (docs/api.md#webhook-safety). An appliance sits on a site's LAN, so private addresses
// (10/8, 172.16/12, 192.168/16, fc00::/7) are allowed; loopback, link-local (which holds the cloud metadata service at
// 169.254.169.254), other metadata addresses, unspecified, multicast and reserved ones are refused unless
// GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL says otherwise. Checked when a URL is set and again on every connection (after
// name resolution), so a name that later resolves elsewhere is refused too.
import { BlockList, isIP } from 'node:net';

const refused = new BlockList();
const V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'an unspecified address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address (cloud metadata lives there)'],
  ['100.100.100.200', 32, 'a cloud metadata address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];
const V6: [string, number, string][] = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['fe80::', 10, 'a link-local address'],
  ['fd00:ec2::254', 128, 'a cloud metadata address'],
  ['ff00::', 8, 'a multicast address'],
];
const reasons: { list: BlockList; reason: string; family: 'ipv4' | 'ipv6' }[] = [];
for (const [family, table] of [['ipv4', V4], ['ipv6', V6]] as const) {
  for (const [net, prefix, reason] of table) {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    refused.addSubnet(net, prefix, family);
    reasons.push({ list, reason, family });
  }
}

/** An IPv4 address carried inside an IPv6 one (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d), judged as itself. */
function embeddedV4(address: string): string | undefined {
  const words = expandV6(address);
  if (words === undefined) return undefined;
  const zeros = (n: number) => words.slice(0, n).every((w) => w === 0);
  const mapped = zeros(5) && words[5] === 0xffff;
  const compatible = zeros(6) && (words[6] !== 0 || words[7] > 1);
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  if (!mapped && !compatible && !nat64) return undefined;
  return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (with an embedded dotted IPv4 tail), or undefined. */
function expandV6(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const b = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail, more] = text.split('::');
  if (more !== undefined) return undefined;
  const part = (s: string | undefined) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const h = part(head);
  const t = part(tail);
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const words = [...h, ...Array(Math.max(fill, 0)).fill(0), ...t];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

/** Why a webhook may not connect to this IP address, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4 !== undefined) return refusedAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (!refused.check(address, type)) return undefined;
  return reasons.find((r) => r.family === type && r.list.check(address, type))?.reason ?? 'a refused address';
}

/**
 * Why a webhook URL is refused, or undefined: http or https only, no credentials (the signature authenticates), and,
 * unless internal targets are allowed, no literal refused address and no `localhost` name.
 */
export function refusedWebhookUrl(text: string, allowInternal: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'expected an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'expected an http:// or https:// URL';
  if (url.username !== '' || url.password !== '') return 'credentials in the URL are refused (the signature authenticates each delivery)';
  if (url.hash !== '') return 'a fragment is never sent: leave it out';
  if (allowInternal) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback address (set GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL to allow it)';
  if (isIP(host) !== 0) {
    const why = refusedAddress(host);
    if (why !== undefined) return `${why} (set GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL to allow it)`;
  }
  return undefined;
}
