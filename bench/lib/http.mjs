// Small HTTP helpers for the benchmarks' set-up requests (not the measured load: that is lib/load.mjs).

/**
 * One request; returns the body text. Throws unless the status is `expect` (a number), or any 2xx when
 * `expect` is '2xx'. `raw` sends a body as-is with Content-Type `type`.
 */
export async function call(url, method, path, { token, body, raw, type = 'application/json', expect = 200 } = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined || raw !== undefined ? { 'content-type': type } : {}) },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  const ok = expect === '2xx' ? res.status >= 200 && res.status < 300 : res.status === expect;
  if (!ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** Logs in and trades the refresh token for an access token. */
export async function accessToken(url, username, password) {
  const refresh = await call(url, 'POST', '/auth/login', { body: { username, password } });
  return call(url, 'GET', '/auth/accesstoken', { token: refresh });
}
