// The console's only way to the server: the public API, with the same tokens any client uses (docs/api.md#tokens).
// The refresh token lives in sessionStorage (a reload keeps the session, closing the tab ends it); access and sudo
// tokens live in memory and are minted again when they expire.

export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
  [extra: string]: unknown;
}

/** A refused request: the API's own message and code, and the headers (Retry-After, X-RateLimit-*). */
export class ApiFailure extends Error {
  constructor(readonly status: number, readonly body: ApiErrorBody, readonly headers: Headers) {
    super(body.message);
  }
  get code(): string { return this.body.code; }
}

export interface ApiResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

type TokenKind = 'access' | 'refresh' | 'sudo' | 'none' | { bearer: string };

interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  token?: TokenKind;
  /** a text body sent as is (telemetry line protocol), instead of JSON */
  text?: string;
}

const REFRESH_KEY = 'gridkeeper.refresh';
const EMAIL_KEY = 'gridkeeper.email';
const ACCESS_LIFETIME_MS = 9 * 60_000; // tokens live 10 minutes: renew a little early
const SUDO_LIFETIME_MS = 4.5 * 60_000;

let access: { token: string; at: number } | undefined;
let sudo: { token: string; at: number } | undefined;
const listeners = new Set<() => void>();

export const session = {
  get refresh(): string | null { return sessionStorage.getItem(REFRESH_KEY); },
  get email(): string | null { return sessionStorage.getItem(EMAIL_KEY); },
  get signedIn(): boolean { return this.refresh !== null; },
  /** a sudo token still valid, if any (from the 2FA step) */
  get sudo(): string | undefined { return sudo && Date.now() - sudo.at < SUDO_LIFETIME_MS ? sudo.token : undefined; },
  /** access token age: setting up TOTP without 2FA needs one at most 5 minutes old */
  get accessAgeMs(): number { return access ? Date.now() - access.at : Infinity; },
  start(refreshToken: string, email: string, accessToken?: string, sudoToken?: string): void {
    sessionStorage.setItem(REFRESH_KEY, refreshToken);
    sessionStorage.setItem(EMAIL_KEY, email);
    access = accessToken ? { token: accessToken, at: Date.now() } : undefined;
    sudo = sudoToken ? { token: sudoToken, at: Date.now() } : undefined;
    notify();
  },
  setSudo(token: string): void { sudo = { token, at: Date.now() }; },
  /** forget everything locally (after logout, or when the refresh token is refused) */
  clear(): void {
    sessionStorage.removeItem(REFRESH_KEY);
    sessionStorage.removeItem(EMAIL_KEY);
    access = undefined;
    sudo = undefined;
    notify();
  },
  /** a fresh access token (less than a minute old) */
  async freshAccess(): Promise<void> {
    access = undefined;
    await accessToken();
  },
  subscribe(fn: () => void): () => void {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};

function notify(): void {
  for (const fn of listeners) fn();
}

async function accessToken(): Promise<string> {
  if (access && Date.now() - access.at < ACCESS_LIFETIME_MS) return access.token;
  const refresh = session.refresh;
  if (!refresh) throw new ApiFailure(401, { statusCode: 401, error: 'Unauthorized', message: 'signed out', code: 'UNAUTHENTICATED' }, new Headers());
  let res: ApiResponse<unknown>;
  try {
    res = await send('GET', '/auth/accesstoken', { token: { bearer: refresh } });
  } catch (err) {
    // the refresh token itself is refused (revoked, expired): the session is over
    if (err instanceof ApiFailure && err.status === 401) session.clear();
    throw err;
  }
  access = { token: res.data as string, at: Date.now() };
  return access.token;
}

async function bearer(kind: TokenKind): Promise<string | undefined> {
  if (kind === 'none') return undefined;
  if (typeof kind === 'object') return kind.bearer;
  if (kind === 'refresh') return session.refresh ?? undefined;
  if (kind === 'sudo') return session.sudo ?? (await accessToken());
  return accessToken();
}

async function send<T>(method: string, path: string, options: RequestOptions): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token = await bearer(options.token ?? 'access');
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.text !== undefined) {
    body = options.text;
    headers['Content-Type'] = 'text/plain';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  const url = new URL(path, location.origin);
  for (const [k, val] of Object.entries(options.query ?? {})) if (val !== undefined) url.searchParams.set(k, String(val));
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, { statusCode: 0, error: 'Network error', message: 'the server could not be reached', code: 'NETWORK' }, new Headers());
  }
  const type = res.headers.get('content-type') ?? '';
  const payload: unknown = res.status === 204 ? undefined : type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) {
    const errorBody = payload && typeof payload === 'object' && 'message' in payload
      ? payload as ApiErrorBody
      : { statusCode: res.status, error: res.statusText, message: String(payload || res.statusText), code: 'HTTP_' + res.status };
    throw new ApiFailure(res.status, errorBody, res.headers);
  }
  return { status: res.status, data: payload as T, headers: res.headers };
}

/** One API call. An access token refused as such (revoked, expired early) is replaced once and the call retried. */
export async function api<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  try {
    return await send<T>(method, path, options);
  } catch (err) {
    const kind = options.token ?? 'access';
    if (err instanceof ApiFailure && err.code === 'UNAUTHENTICATED' && kind === 'access' && access) {
      access = undefined;
      return send<T>(method, path, options);
    }
    throw err;
  }
}

export const get = <T>(path: string, options?: RequestOptions) => api<T>('GET', path, options).then((r) => r.data);
export const post = <T>(path: string, body?: unknown, options?: RequestOptions) => api<T>('POST', path, { ...options, body }).then((r) => r.data);
export const put = <T>(path: string, body?: unknown, options?: RequestOptions) => api<T>('PUT', path, { ...options, body }).then((r) => r.data);
export const del = <T>(path: string, options?: RequestOptions) => api<T>('DELETE', path, options).then((r) => r.data);

/** Ends the session on the server (the refresh token is revoked) and locally, even when the server is unreachable. */
export async function signOut(): Promise<void> {
  const refresh = session.refresh;
  try {
    if (refresh) await send('POST', '/auth/logout', { token: { bearer: refresh } });
  } finally {
    session.clear();
  }
}
