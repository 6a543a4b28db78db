// Small HTTP helpers for the benchmarks: set-up requests, and one timed request (the many-connection load is
// lib/load.mjs).
import http from 'node:http';

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

/**
 * One request to a loopback server over `agent` (keep-alive, so that the time is the request's and not a connection's),
 * timed from its start to the last byte of the answer: { status, headers, text, ms }.
 */
export function timedRequest(agent, url, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1') throw new Error('loopback only');
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method,
      headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * The InfluxDB door's set-up on a fresh gridkeeper: the admin signed in on the premium tier, a device per nodeId in the
 * root role, and an API token as a dashboard would hold it. Returns the access token and the token's header.
 */
export async function influxDoorSession(url, password, nodeIds) {
  const access = await accessToken(url, 'admin@localhost', password);
  await call(url, 'PUT', '/v1/user/admin@localhost/tier', { token: access, body: { tier: 'premium' }, expect: 204 });
  for (const nodeId of nodeIds) {
    await call(url, 'POST', '/v1/device?roleId=1', { token: access, body: { properties: { nodeId, nodeType: 'smartgridController' } } });
  }
  const token = JSON.parse(await call(url, 'POST', '/user/tokens', { token: access, body: { name: 'bench', scopes: ['api'] }, expect: 201 })).token;
  return { access, auth: { authorization: `Token ${token}` } };
}
