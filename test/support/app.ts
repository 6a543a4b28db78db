// makeTestApp(): a fresh database (in memory, or on PostgreSQL when the suite runs on that backend) with migrations applied, a bootstrapped root user, a fake clock, and
// request helpers. Each test builds its own app and fixtures: no shared state, no order dependence.
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { randomBytes } from 'node:crypto';
import { createApp } from '../../src/boot/app.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { databaseUrl, freshPostgres, testBackend } from './postgres.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { signToken } from '../../src/auth/tokens.ts';
import { hashSecret, lighterHashesForTests } from '../../src/auth/passwords.ts';
import { insertUser, tokenGeneration } from '../../src/auth/users.store.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { Deps } from '../../src/context/deps.ts';
import type { TokenType } from '../../src/http/env.ts';
import { ROOT_ROLE_ID } from '../../src/access/root.ts';

export const ADMIN_EMAIL = 'admin@localhost';
// Hundreds of apps and accounts per suite: their hashes use a lighter scrypt (passwords.ts); the service's own
// parameters are checked in test/auth/password-hash.test.ts and used by every test that runs the real executable.
lighterHashesForTests();

export const ADMIN_PASSWORD = 'admin-password-123';
/** 2026-01-01T00:00:00.000Z */
export const T0 = Date.UTC(2026, 0, 1);

export interface FakeClock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function fakeClock(start = T0): FakeClock {
  let t = start;
  return { now: () => t, set: (ms) => { t = ms; }, advance: (ms) => { t += ms; } };
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** raw body text/bytes sent as-is (no JSON encoding) */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** parsed JSON when the response is JSON, else the text */
  body: any;
  text: string;
}

export interface TestApp {
  deps: Deps;
  clock: FakeClock;
  adminId: number;
  /** an access token of the admin (member of the root role) */
  adminToken: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** mint a token directly (no login round trip) */
  token(userId: number, typ?: TokenType, extra?: { sid?: string }): Promise<string>;
  /** create a user (password hashed like the real thing) and return its id and an access token */
  createUser(email: string, password?: string): Promise<{ id: number; token: string }>;
  /**
   * PostgreSQL: another node of this installation — its own process state and connection pool, the same database and
   * clock. `via` rewrites the database URL the node connects to (e.g. through a proxy); `env` adds to its settings.
   */
  anotherNode(options?: { via?: (url: string) => string; env?: Record<string, string> }): Promise<TestApp>;
  close(): Promise<void>;
}

let userHash: Promise<string> | undefined;

/**
 * An opener of test apps that are all closed when the calling test file ends (its database dropped on PostgreSQL):
 * for tests that take no test context to close them with.
 */
export function appOpener(): () => Promise<TestApp> {
  const apps: TestApp[] = [];
  after(() => Promise.all(apps.map((a) => a.close())));
  return async () => {
    const t = await makeTestApp();
    apps.push(t);
    return t;
  };
}

/** PostgreSQL: three nodes of one installation (see anotherNode), closed when the test ends. */
export async function threeNodes(t: { after(fn: () => Promise<void>): void }, options: { env?: Record<string, string> } = {}): Promise<TestApp[]> {
  const a = await makeTestApp(options);
  const nodes = [a, await a.anotherNode(), await a.anotherNode()];
  t.after(async () => { for (const n of [...nodes].reverse()) await n.close(); });
  return nodes;
}

/**
 * A test app on a fresh database of the backend under test. `file` (SQLite only): the database in that file, with the
 * addon its fold worker loads (telemetry writes are then staged, as in the service), instead of in memory.
 */
export async function makeTestApp(options: { now?: number; env?: Record<string, string>; file?: { path: string; addon: string | undefined } } = {}): Promise<TestApp> {
  // On PostgreSQL the sealing key would live in the data dir: a test app brings a key of its own instead, as an
  // in-memory SQLite app gets one (see runtime.openSecretBox).
  const ownKey: Record<string, string> = testBackend() === 'postgres' ? { GRIDKEEPER_SECRET_KEY: randomBytes(32).toString('base64') } : {};
  // the backend under test (test/run.mjs runs the suite once per backend): a fresh database either way
  const pg = testBackend() === 'postgres' ? await freshPostgres() : undefined;
  const db = pg?.db ?? openDatabase(options.file === undefined ? { file: ':memory:' } : { file: options.file.path, addonFile: options.file.addon });
  return appOn(db, fakeClock(options.now ?? T0), { ...ownKey, ...options.env }, () => (pg ? pg.drop() : db.close()), pg?.name);
}

/** A test app (a node) on `db`; `databaseName`: the PostgreSQL database, for further nodes on it. */
async function appOn(db: Db, clock: FakeClock, env: Record<string, string>, close: () => Promise<void>, databaseName?: string): Promise<TestApp> {
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'error', ...env }, []);
  const { deps } = await createDeps({ config, db, now: clock.now, log: createLogger('error') });
  const { app } = createApp(deps);
  const admin = (await db.get(db.qb.selectFrom('users').select('id').where('email', '=', ADMIN_EMAIL)))!;

  const token = async (userId: number, typ: TokenType = 'access', extra: { sid?: string } = {}) =>
    (await signToken(deps.keys, { typ, sub: userId, gen: await tokenGeneration(db, userId), ...extra }, clock.now())).token;

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization ??= `Bearer ${opts.token}`;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (opts.raw !== undefined) body = typeof opts.raw === 'string' ? opts.raw : new Uint8Array(opts.raw);
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.request(path, { method, headers, body }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        // several JSON documents, one a line (chunked InfluxDB answers), stay text
        if (!text.trimEnd().includes('\n')) throw err;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  return {
    deps,
    clock,
    adminId: admin.id,
    adminToken: await token(admin.id),
    request,
    token,
    async createUser(email: string, password?: string) {
      // Hashing is slow on purpose; tests that do not log in share one hash of a fixed password.
      const hash = password ? await hashSecret(password) : await (userHash ??= hashSecret('user-password-123'));
      const id = await insertUser(db, email, hash, clock.now());
      assert.ok(id !== undefined, `user ${email} exists already`);
      return { id, token: await token(id) };
    },
    async anotherNode(options = {}) {
      assert.ok(databaseName !== undefined, 'several nodes share a PostgreSQL database: run on the PostgreSQL pass');
      const url = databaseUrl(databaseName);
      // a short connect timeout: a node cut off from its database answers 503 at once
      const other = openPostgres({ url: options.via ? options.via(url) : url, poolSize: 4, connectTimeoutMs: 2_000 });
      try {
        return await appOn(other, clock, { ...env, ...options.env }, () => other.close(), databaseName);
      } catch (err) {
        await other.close();
        throw err;
      }
    },
    async close() {
      await deps.events.stop();
      await close();
    },
  };
}

/** Asserts the contract's error shape and returns the body. */
export function assertError(res: TestResponse, status: number, code: string): TestResponse['body'] {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.equal(res.body.statusCode, status);
  assert.equal(res.body.code, code, res.text);
  assert.equal(typeof res.body.error, 'string');
  assert.equal(typeof res.body.message, 'string');
  return res.body;
}

export { ROOT_ROLE_ID };
