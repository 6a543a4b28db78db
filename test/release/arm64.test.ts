// The linux-arm64 executable (npm run build:release makes it the same way), run on this machine under qemu-user:
// first start on an empty data dir (its allocator addon, cross-built too, sets glibc's allocator), the admin logs in,
// a device is created, telemetry is written and read back, and `backup` copies the database while the service runs.
// One pass, on SQLite: everything runs emulated, ~10x slower.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { BINARY, startBinary } from '../support/binary.ts';
import { targetExecutable } from '../../src/build/release.mjs';
import { emulator } from '../../src/build/targets.mjs';

const BUNDLE = fileURLToPath(new URL('../../dist/gridkeeper.cjs', import.meta.url));
const PASSWORD = 'arm64-admin-password';

test('linux-arm64: serves under qemu from an empty data dir; login, device, telemetry, backup', { timeout: 900_000 }, async (t) => {
  const { exe } = targetExecutable('linux-arm64', { bundle: BUNDLE, hostExe: BINARY });
  assert.match(execFileSync('file', ['-b', exe], { encoding: 'utf8' }), /ELF 64-bit LSB .*ARM aarch64/);
  const [qemu, ...qemuArgs] = emulator('linux-arm64');
  const dir = mkdtempSync(join(tmpdir(), 'gk-arm64-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  const run = await startBinary(qemu, [...qemuArgs, exe, '--data-dir', data], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD }, dir, 120_000);
  t.after(() => run.stop('SIGKILL'));
  const allocator = JSON.parse(run.stdout.find((l) => l.includes('"msg":"allocator"')) ?? 'null');
  assert.deepEqual(allocator?.set, { MALLOC_ARENA_MAX: 2, MALLOC_MMAP_THRESHOLD_: 131072, MALLOC_TRIM_THRESHOLD_: 2097152 }, JSON.stringify(allocator));
  const call = async (method: string, path: string, token?: string, body?: unknown, type = 'application/json') => {
    const res = await fetch(`${run.url}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': type } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };

  const login = await call('POST', '/auth/login', undefined, { username: 'admin@localhost', password: PASSWORD });
  assert.equal(login.status, 200, login.text);
  const access = await call('GET', '/auth/accesstoken', login.text);
  assert.equal(access.status, 200, access.text);
  const token = access.text;

  const created = await call('POST', '/v1/device?roleId=1', token, { properties: { nodeId: 'gw-1', nodeType: 'controller' } });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(JSON.parse(created.text).device.properties, { nodeId: 'gw-1', nodeType: 'controller' });

  const at = Date.UTC(2026, 0, 1);
  const lines = [0, 1, 2].map((i) => `power,nodeId=gw-1 p=${1.5 + i},n=${i}i ${BigInt(at + i * 1000) * 1_000_000n}`).join('\n');
  const written = await call('POST', '/v1/telemetry?db=energy&rp=autogen', token, lines, 'text/plain');
  assert.equal(written.status, 204, written.text);
  const read = await call('POST', '/v1/telemetry/query', token, {
    select: ['p', 'n'], from: { measurement: 'power', namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' } },
    where: { tags: { nodeId: 'gw-1' }, time: [{ operator: '>=', value: at - 1000 }, { operator: '<', value: at + 10_000 }] },
  });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(JSON.parse(read.text).series?.flatMap((s: { values: unknown[][] }) => s.values), [0, 1, 2].map((i) =>
    [new Date(at + i * 1000).toISOString(), 1.5 + i, i]));

  const copy = join(dir, 'copy.db');
  assert.match(execFileSync(qemu, [...qemuArgs, exe, 'backup', copy, '--data-dir', data], { encoding: 'utf8' }), /backup written to/);
  assert.equal(readFileSync(copy).subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
  const backup = new Database(copy, { readonly: true });
  try {
    assert.deepEqual(backup.prepare("SELECT json_extract(properties, '$.nodeId') AS nodeId FROM devices").all(), [{ nodeId: 'gw-1' }]);
    assert.equal(backup.prepare("SELECT count(*) FROM users WHERE email = 'admin@localhost'").pluck().get(), 1);
  } finally {
    backup.close();
  }
  assert.equal(await run.stop('SIGTERM'), 0, 'graceful stop exits 0');
});
