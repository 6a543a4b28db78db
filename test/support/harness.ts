// The pieces every hardening suite needs around the real executable: start it on a data dir, log in over HTTP, open
// its database file from the test process (read-only: the server keeps its connection), check integrity, and a
// seeded random source so every run is reproducible.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startBinary, type RunningBinary } from './binary.ts';
import type { HttpClient } from './http-client.ts';

export const ADMIN_EMAIL = 'admin@localhost';
export const ADMIN_PASSWORD = 'hardening-admin-password';

/** Starts dist/gridkeeper (a copy at `exe`) on port 0 with `dataDir`; warn-level logs keep stdout small under load. */
export function startGridkeeper(exe: string, dataDir: string, env: Record<string, string> = {}): Promise<RunningBinary> {
  return startBinary(exe, ['--data-dir', dataDir], { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'warn', ...env });
}

/** kill -9 and wait until the process is gone. */
export async function kill9(run: RunningBinary): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  await run.stop('SIGKILL');
}

export interface Session {
  refresh: string;
  access: string;
}

/** POST /auth/login then GET /auth/accesstoken; asserts both succeed. */
export async function loginOver(client: HttpClient, username: string, password: string): Promise<Session> {
  const login = await client.request('POST', '/auth/login', { body: { username, password } });
  assert.equal(login.status, 200, `login ${username}: ${login.status} ${login.text}`);
  const access = await client.request('GET', '/auth/accesstoken', { token: login.text });
  assert.equal(access.status, 200, `access token for ${username}: ${access.status} ${access.text}`);
  return { refresh: login.text, access: access.text };
}

export function dataDbFile(dataDir: string): string {
  return join(dataDir, 'gridkeeper.db');
}

/** The data dir's database, opened from the test process. Read-only unless asked: the server owns the writes. */
export function openDataDb(file: string, options: { readonly?: boolean } = {}): Database.Database {
  const db = new Database(file, { readonly: options.readonly ?? true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/** PRAGMA integrity_check and foreign_key_check of a database file. */
export function assertIntact(db: Database.Database, what: string): void {
  const integrity = db.pragma('integrity_check') as { integrity_check: string }[];
  assert.deepEqual(integrity.map((r) => r.integrity_check), ['ok'], `${what}: integrity_check`);
  const fk = db.pragma('foreign_key_check') as unknown[];
  assert.deepEqual(fk, [], `${what}: foreign_key_check`);
}

/** mulberry32: a tiny seeded PRNG; the same seed gives the same run. */
export function seeded(seed: number): { next(): number; int(lo: number, hi: number): number; pick<T>(xs: readonly T[]): T } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** an integer in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return n;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
