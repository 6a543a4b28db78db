// One webhook attempt: a POST that counts as delivered on a 2xx only. Redirects are not followed (a failure: the URL
// should be updated), an answer that takes more than 15 s is a failure, and only the first bytes of the answer are
// kept for the delivery log. Connections go only to addresses address-rules.ts allows, checked after resolution.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { refusedAddress } from './address-rules.ts';
import { request, type Target } from './webhook-client.ts';

export const WEBHOOK_TIMEOUT_MS = 15_000;

export interface AttemptResult {
  /** the HTTP status, or null when there was no answer */
  status: number | null;
  /** why it failed, when it did */
  error: string | null;
  /** the answer's first bytes */
  response: string | null;
  /** Retry-After as sent */
  retryAfter?: string;
}

/** dns.lookup that fails for an address webhooks may not reach (the socket never opens). */
function guardedLookup(allowInternal: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const list = allowInternal ? addresses : addresses.filter((a) => refusedAddress(a.address) === undefined);
      if (list.length === 0) {
        const why = refusedAddress(addresses[0]?.address ?? '') ?? 'no address';
        return callback(Object.assign(new Error(`${hostname} resolves to ${why}`), { code: 'EREFUSEDADDRESS' }), '', 0);
      }
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  };
}

export interface PostOptions {
  allowInternal: boolean;
  timeoutMs?: number;
}

/** A URL's target, or why it is refused; kept per URL and rule (a subscription's URL is the same for every delivery). */
const targets = new Map<string, Target | string>();

function targetOf(url: string, allowInternal: boolean): Target | string {
  const key = `${allowInternal ? 'i' : 'e'} ${url}`;
  let target = targets.get(key);
  if (target !== undefined) return target;
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const refused = !allowInternal && isIP(host) !== 0 ? refusedAddress(host) : undefined;
  const secure = u.protocol === 'https:';
  target = refused !== undefined ? `refused: ${host} is ${refused}` : {
    secure, host, port: u.port === '' ? (secure ? 443 : 80) : Number(u.port), path: `${u.pathname}${u.search}`, hostHeader: u.host,
    key: `${allowInternal ? 'i' : 'e'} ${u.protocol}//${u.host}`, lookup: allowInternal ? lookupAny : lookupExternal,
  };
  if (targets.size >= 1_000) targets.clear();
  targets.set(key, target);
  return target;
}

const lookupAny = guardedLookup(true);
const lookupExternal = guardedLookup(false);

export function postWebhook(target: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<AttemptResult> {
  const t = targetOf(target, options.allowInternal);
  if (typeof t === 'string') return Promise.resolve({ status: null, error: t, response: null });
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  let sent: ReturnType<typeof request>;
  try {
    sent = request(t, headers, body);
  } catch (err) {
    return Promise.resolve({ status: null, error: `error: ${err instanceof Error ? err.message : String(err)}`, response: null });
  }
  const { answer, cancel } = sent;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      cancel();
      resolve({ status: null, error: `no complete answer within ${timeoutMs / 1000} s`, response: null });
    }, timeoutMs);
    void answer.then(({ status, retryAfter, body: kept }) => {
      clearTimeout(timer);
      const error = status >= 200 && status < 300 ? null
        : status >= 300 && status < 400 ? `answered ${status}: redirects are not followed (update the URL)` : `answered ${status}`;
      resolve({ status, error, response: kept.toString('utf8'), retryAfter });
    }, (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ status: null, error: err.code === 'EREFUSEDADDRESS' ? `refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`, response: null });
    });
  });
}
