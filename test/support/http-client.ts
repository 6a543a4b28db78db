// A small HTTP client for tests that attack the running executable: node:http on loopback, keep-alive or not, every
// request bounded by a timeout, and it never throws — a network failure (the server was killed, the connection was
// reset) comes back as status 0 with the error code, so a load generator can tell "answered" from "unknown".
import http from 'node:http';

export interface HttpResult {
  /** 0 when no answer arrived (connection refused or reset, timeout) */
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** parsed JSON when the answer is JSON, else the text */
  body: any;
  /** the network error code when status is 0 */
  error?: string;
}

export interface HttpRequestOptions {
  token?: string;
  /** JSON-encoded with Content-Type application/json */
  body?: unknown;
  /** sent as is */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface HttpClient {
  readonly base: string;
  request(method: string, path: string, options?: HttpRequestOptions): Promise<HttpResult>;
  /** closes the pooled connections */
  close(): void;
}

export function loopbackUrl(base: string): URL {
  const url = new URL(base);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error(`tests only target loopback, not ${url.hostname}`);
  return url;
}

export function httpClient(base: string, options: { keepAlive?: boolean; maxSockets?: number } = {}): HttpClient {
  const url = loopbackUrl(base);
  // An idle pooled socket is dropped after 2 s, well before the server's 5 s keep-alive timeout: otherwise a request
  // written just as the server closes an idle socket fails with ECONNRESET (seen under a load average of 11 on 2 cores).
  // Without this option Node 20's agent keeps idle sockets forever (it applies the server's Keep-Alive hint only
  // when an agent timeout is set).
  const agent = new http.Agent({ keepAlive: options.keepAlive ?? true, maxSockets: options.maxSockets ?? 64, timeout: 2_000 });
  return {
    base,
    request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization ??= `Bearer ${opts.token}`;
      let payload: string | Uint8Array | undefined;
      if (opts.raw !== undefined) payload = opts.raw;
      else if (opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
      return new Promise((resolve) => {
        let settled = false;
        const done = (r: HttpResult) => { if (!settled) { settled = true; resolve(r); } };
        const req = http.request({ agent, host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err: NodeJS.ErrnoException) => done({ status: 0, headers: {}, text: '', body: undefined, error: err.code ?? err.message }));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            if ((res.headers['content-type'] ?? '').includes('json') && text !== '') {
              try { body = JSON.parse(text); } catch { body = text; }
            }
            done({ status: res.statusCode ?? 0, headers: res.headers, text, body });
          });
        });
        req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
        req.on('error', (err: NodeJS.ErrnoException) => done({ status: 0, headers: {}, text: '', body: undefined, error: err.code ?? err.message }));
        if (payload !== undefined) req.write(payload);
        req.end();
      });
    },
    close: () => agent.destroy(),
  };
}

export interface CallResult {
  status: number;
  /** parsed JSON when the answer is JSON, else the text */
  body: any;
  text: string;
}

/** One request through fetch: `token` as the bearer, `json` as a JSON body; the answer's body parsed when it is JSON. */
export async function call(url: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<CallResult> {
  const { token, json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(url, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text };
}
