// One webhook attempt: a POST that counts as delivered on a 2xx only. Redirects are not followed (a failure: the URL
// should be updated), an answer that takes more than 15 s is a failure, and only the first bytes of the answer are
// kept for the delivery log. Connections go only to addresses address-rules.ts allows, checked after resolution.
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { refusedAddress } from './address-rules.ts';

export const WEBHOOK_TIMEOUT_MS = 15_000;
/** bytes of an answer's body kept in the delivery log */
const RESPONSE_BYTES = 1024;

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

// Connections are kept for the next delivery to the same receiver; each is opened to an allowed address only.
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 16 }), https: new https.Agent({ keepAlive: true, maxSockets: 16 }) };

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

export function postWebhook(target: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<AttemptResult> {
  const url = new URL(target);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowInternal && isIP(host) !== 0) {
    const why = refusedAddress(host);
    if (why !== undefined) return Promise.resolve({ status: null, error: `refused: ${host} is ${why}`, response: null });
  }
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(options.allowInternal),
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = res.headers['retry-after'];
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const response = Buffer.concat(chunks).subarray(0, RESPONSE_BYTES).toString('utf8');
        const error = status >= 200 && status < 300 ? null
          : status >= 300 && status < 400 ? `answered ${status}: redirects are not followed (update the URL)` : `answered ${status}`;
        done({ status, error, response, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined });
      };
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_BYTES) chunks.push(chunk);
        size += chunk.length;
        // the rest is read and dropped, so the connection can serve the next delivery; a huge body ends with the timeout
      });
      res.on('end', finish);
      res.on('error', () => finish());
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ status: null, error: `no complete answer within ${(options.timeoutMs ?? WEBHOOK_TIMEOUT_MS) / 1000} s`, response: null });
    }, options.timeoutMs ?? WEBHOOK_TIMEOUT_MS);
    req.on('error', (err: NodeJS.ErrnoException) => {
      done({ status: null, error: err.code === 'EREFUSEDADDRESS' ? `refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`, response: null });
    });
    req.end(body);
  });
}
