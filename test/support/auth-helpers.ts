// Authentication helpers for tests of every domain.
//
// assertRequiresAuth(t, method, path, body?) proves that a route refuses, with 401 UNAUTHENTICATED: no token, a garbage
// token, a live refresh token and a partial (2FA-pending) token. Call it for every /v1 and /user route.
import assert from 'node:assert/strict';
import { generateSync } from 'otplib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeClock, TestApp, TestResponse } from './app.ts';
import { assertError, fakeClock, T0, ADMIN_PASSWORD } from './app.ts';
import { createApp } from '../../src/boot/app.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openSession } from '../../src/auth/sessions.ts';
import { tokenGeneration } from '../../src/auth/users.store.ts';
import { signToken } from '../../src/auth/tokens.ts';
import type { TokenType } from '../../src/http/env.ts';

/** A token exactly as the service issues it: refresh tokens open a session, access/sudo tokens join it. */
export async function liveToken(t: TestApp, userId: number, typ: TokenType, sid?: string): Promise<{ token: string; sid?: string }> {
  const now = t.clock.now();
  const session = typ === 'refresh' ? await openSession(t.deps.db, userId, now) : sid;
  const gen = await tokenGeneration(t.deps.db, userId);
  const { token } = await signToken(t.deps.keys, { typ, sub: userId, gen, ...(session ? { sid: session } : {}) }, now);
  return { token, ...(session ? { sid: session } : {}) };
}

export async function assertRequiresAuth(t: TestApp, method: string, path: string, body?: unknown): Promise<void> {
  const refresh = (await liveToken(t, t.adminId, 'refresh')).token;
  const partial = (await liveToken(t, t.adminId, 'partial')).token;
  const cases: [string, Record<string, string> | undefined, string | undefined][] = [
    ['no token', undefined, undefined],
    ['garbage token', { authorization: 'Bearer not.a.jwt' }, undefined],
    ['not a bearer header', { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` }, undefined],
    ['refresh token', undefined, refresh],
    ['partial token', undefined, partial],
  ];
  for (const [what, headers, token] of cases) {
    const res = await t.request(method, path, { body, token, headers });
    assert.equal(res.status, 401, `${method} ${path} with ${what}: expected 401, got ${res.status}: ${res.text}`);
    assertError(res, 401, 'UNAUTHENTICATED');
  }
}

/** A plain (non-sudo) access token gets 403 SUDO_REQUIRED. */
export async function assertRequiresSudo(t: TestApp, method: string, path: string, body?: unknown): Promise<void> {
  const res = await t.request(method, path, { body, token: t.adminToken });
  assertError(res, 403, 'SUDO_REQUIRED');
}

/** POST /auth/login; the response as is. */
export function login(t: TestApp, username: string, password: string, headers?: Record<string, string>): Promise<TestResponse> {
  return t.request('POST', '/auth/login', { body: { username, password }, headers });
}

/** Logs in (no 2FA) and returns the refresh token. */
export async function loginRefresh(t: TestApp, username: string, password: string): Promise<string> {
  const res = await login(t, username, password);
  assert.equal(res.status, 200, res.text);
  return res.text;
}

export async function accessFrom(t: TestApp, refresh: string): Promise<string> {
  const res = await t.request('GET', '/auth/accesstoken', { token: refresh });
  assert.equal(res.status, 200, res.text);
  return res.text;
}

/** The current TOTP code of a base32 secret on the app's clock (offset in 30 s steps). */
export function totpCode(t: TestApp, secret: string, stepOffset = 0): string {
  return generateSync({ secret, epoch: Math.floor(t.clock.now() / 1000) + stepOffset * 30 });
}

/** setup + enable with a fresh access token; returns the secret and the recovery codes. The clock moves one step on. */
export async function enableTotp(t: TestApp, accessToken: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await t.request('POST', '/user/2fa/totp/setup', { token: accessToken });
  assert.equal(setup.status, 200, setup.text);
  const enable = await t.request('POST', '/user/2fa/totp/enable', { token: accessToken, body: { totp: totpCode(t, setup.body.secret) } });
  assert.equal(enable.status, 200, enable.text);
  // the enable code's step is spent; move on so the next code is a fresh one
  t.clock.advance(30_000);
  return { secret: setup.body.secret, recoveryCodes: enable.body.recoveryCodes };
}

/**
 * An app on a temporary database FILE that can be "restarted": each start() opens the file again and builds fresh
 * deps and app (as a new process would), on one shared fake clock. cleanup() removes the file.
 */
export function restartableApp(): {
  clock: FakeClock;
  /** the data dir: the database file and the secret key file */
  dir: string;
  start(): Promise<{ request: (method: string, path: string, opts?: { token?: string; body?: unknown }) => Promise<{ status: number; text: string; body: any }>; stop(): Promise<void> }>;
  cleanup(): Promise<void>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'gridkeeper-auth-'));
  const file = join(dir, 'gridkeeper.db');
  const clock = fakeClock(T0);
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'error' }, []);
  const opened: { close(): Promise<void> }[] = [];
  return {
    clock,
    dir,
    async start() {
      const db = openDatabase({ file });
      opened.push(db);
      const { deps } = await createDeps({ config, db, now: clock.now, log: createLogger('error') });
      const { app } = createApp(deps);
      return {
        async request(method, path, opts = {}) {
          const headers: Record<string, string> = {};
          if (opts.token) headers.authorization = `Bearer ${opts.token}`;
          if (opts.body !== undefined) headers['content-type'] = 'application/json';
          const res = await app.request(path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) },
            { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
          const text = await res.text();
          return { status: res.status, text, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
        },
        stop: () => db.close(),
      };
    },
    /** closes every database a start() opened (closing twice is harmless), then removes the directory */
    cleanup: async () => {
      for (const db of opened) await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
