// Retention (GRIDKEEPER_AUDIT_RETENTION / --audit-retention, default 400 days, pruned at most once a minute in bounded
// chunks) and `gridkeeper audit export` (JSON lines for a SIEM).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { makeTestApp, ADMIN_PASSWORD, T0, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { runCli } from '../../src/boot/cli.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { createApp } from '../../src/boot/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { signToken } from '../../src/auth/tokens.ts';
import { iterateAuditEntries } from '../../src/audit/audit.store.ts';
import { auditCount } from './fixtures.ts';
import { addChild, ALL } from '../roles/fixtures.ts';

const DAY = 86_400_000;

/** Old entries written straight into the table (the API always stamps "now"). */
async function oldEntries(t: TestApp, n: number, at: number): Promise<void> {
  await t.deps.db.tx(async (tx) => {
    for (let i = 0; i < n; i++) {
      await tx.run(sql`INSERT INTO audit_log (at, action, target_kind, target_id, changes) VALUES (${at}, 'role.update', 'role', '1', '{}')`);
    }
  });
}

/** A role update by the admin: one entry per call. */
async function rename(t: TestApp, name: string): Promise<void> {
  const [role] = await addChild(t, ROOT_ROLE_ID, ALL);
  const res = await t.request('PUT', `/v1/role/${role}`, { token: await t.token(t.adminId), body: { name, selfRights: ALL } });
  assert.equal(res.status, 200, res.text);
}

describe('audit retention', () => {
  it('the setting: default 400 days, a duration, or off; a bad value names the variable and the flag', () => {
    assert.equal(parseConfig({}, []).config.auditRetention, 400 * DAY);
    assert.equal(parseConfig({ GRIDKEEPER_AUDIT_RETENTION: '90d' }, []).config.auditRetention, 90 * DAY);
    assert.equal(parseConfig({ GRIDKEEPER_AUDIT_RETENTION: '90d' }, ['--audit-retention', '2w']).config.auditRetention, 14 * DAY);
    assert.equal(parseConfig({ GRIDKEEPER_AUDIT_RETENTION: 'off' }, []).config.auditRetention, null);
    assert.throws(() => parseConfig({ GRIDKEEPER_AUDIT_RETENTION: 'a year' }, []), /GRIDKEEPER_AUDIT_RETENTION \/ --audit-retention: expected a duration/);
  });

  it('a write prunes entries older than the retention, at most once a minute, 1,000 at a time until the backlog is gone', async () => {
    const t = await makeTestApp({ env: { GRIDKEEPER_AUDIT_RETENTION: '30d' } });
    await rename(t, 'r0'); // first write: the first prune (nothing to do)
    await oldEntries(t, 2_500, T0 - 31 * DAY);
    await oldEntries(t, 3, T0 - 29 * DAY); // within retention
    t.clock.advance(10_000);
    await rename(t, 'r1');
    assert.equal(await auditCount(t), 2 + 2_503, 'within the minute: no prune');
    t.clock.advance(60_000);
    await rename(t, 'r2');
    assert.equal(await auditCount(t), 3 + 1_503, 'one chunk');
    await rename(t, 'r3');
    assert.equal(await auditCount(t), 4 + 503, 'a full chunk went: the next write continues');
    await rename(t, 'r4');
    assert.equal(await auditCount(t), 5 + 3, 'the backlog is gone');
    // the three newer ones age out a minute after the next check
    t.clock.advance(2 * DAY);
    await rename(t, 'r5');
    assert.equal(await auditCount(t), 6);
    const left = (await t.deps.db.get(sql<{ at: number }>`SELECT min(at) AS at FROM audit_log`))!.at;
    assert.ok(left >= t.clock.now() - 30 * DAY);
    await t.close();
  });

  it('off keeps everything', async () => {
    const t = await makeTestApp({ env: { GRIDKEEPER_AUDIT_RETENTION: 'off' } });
    await oldEntries(t, 10, T0 - 10_000 * DAY);
    await rename(t, 'x');
    t.clock.advance(2 * 60_000);
    await rename(t, 'y');
    assert.equal(await auditCount(t), 12);
    await t.close();
  });
});

describe('gridkeeper audit export', () => {
  it('reads in keyset pages: entries of the same time are neither repeated nor skipped at a page boundary', async () => {
    const t = await makeTestApp();
    await oldEntries(t, 5, T0 - 2 * DAY);
    await oldEntries(t, 3, T0 - DAY);
    await oldEntries(t, 2, T0 - 3 * DAY); // before the range
    const from = T0 - 2 * DAY;
    const expected = (await t.deps.db.all(sql<{ id: number }>`SELECT id FROM audit_log WHERE at >= ${from} AND at < ${T0} ORDER BY at, id`)).map((r) => r.id);
    assert.equal(expected.length, 8);
    for (const pageSize of [1, 2, 3, 5, 8, 1000]) {
      const ids: number[] = [];
      for await (const row of iterateAuditEntries(t.deps.db, from, T0, pageSize)) ids.push(row.id);
      assert.deepEqual(ids, expected, `pages of ${pageSize}`);
    }
    await t.close();
  });

  it('writes the entries of [from, to) as JSON lines, oldest first, in the shape of the query', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-audit-export-'));
    try {
      let now = T0;
      const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir }, []);
      const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
      const { deps } = await createDeps({ config, db, now: () => now, log: createLogger('error') });
      const { app } = createApp(deps);
      const token = (await signToken(deps.keys, { typ: 'access', sub: 1 }, now)).token;
      const send = (method: string, path: string, body: unknown) => app.request(path, {
        method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      }, { incoming: { socket: { remoteAddress: '10.0.0.7' } } });
      const flags = { roleManagement: true, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };
      for (let i = 0; i < 4; i++) {
        assert.equal((await send('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { manages: flags, role: { name: `role ${i}`, selfRights: flags } })).status, 200);
        now += 60_000;
      }
      const query = await send('POST', '/v1/audit/query', {});
      const all = ((await query.json()) as { entries: unknown[] }).entries;
      await db.close();

      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
      const from = new Date(T0 + 60_000).toISOString();
      const to = new Date(T0 + 180_000).toISOString();
      assert.equal(await runCli(['audit', 'export', '--from', from, '--to', to, '--data-dir', dir], {}, io), 0, err.join('\n'));
      assert.deepEqual(out.map((l) => JSON.parse(l)), [all[2], all[1]]);
      assert.equal((all[1] as any).clientAddress, '10.0.0.7');
      // no bounds: everything, oldest first
      out.length = 0;
      assert.equal(await runCli(['audit', 'export', `--data-dir=${dir}`], {}, io), 0, err.join('\n'));
      assert.deepEqual(out.map((l) => JSON.parse(l)), [...all].reverse());

      for (const [args, message] of [
        [['--from', 'yesterday'], /audit export: --from: expected an ISO 8601 date-time/],
        [['--to'], /audit export: --to needs a value/],
        [['--from', to, '--to', from], /--from must be before --to/],
        [['--since', from], /unknown argument --since/],
      ] as const) {
        err.length = 0;
        assert.equal(await runCli(['audit', 'export', ...args, '--data-dir', dir], {}, io), 2);
        assert.match(err.join('\n'), message);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('audit entries of host commands', () => {
  it('license create and user add record their changes with no actor, address or request id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-audit-cli-'));
    try {
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
      const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD };
      assert.equal(await runCli(['license', 'create', '--type', 'residential', '--duration', '10', '--count', '2', '--data-dir', dir], env, io), 0, err.join('\n'));
      const keys = [...out];
      const file = openDatabase({ file: join(dir, 'gridkeeper.db') });
      await file.run(sql`INSERT INTO roles (id, name, self_role_management, self_user_management, self_view_management, self_device_management, self_report_management, self_alarm_management, created_at) VALUES (1, 'root', 1, 1, 1, 1, 1, 1, 0)`);
      await file.close();
      assert.equal(await runCli(['user', 'add', 'host@example.test', '--password', 'host-password-1', '--role', '1', '--data-dir', dir], env, io), 0, err.join('\n'));
      out.length = 0;
      assert.equal(await runCli(['audit', 'export', '--data-dir', dir], env, io), 0, err.join('\n'));
      const entries = out.map((l) => JSON.parse(l));
      assert.deepEqual(entries.map((e) => [e.action, e.target.kind, e.actor, e.clientAddress, e.requestId]), [
        ['license.create', 'license', { userId: null, email: null, token: null }, null, null],
        ['license.create', 'license', { userId: null, email: null, token: null }, null, null],
        ['user.create', 'user', { userId: null, email: null, token: null }, null, null],
        ['member.put', 'member', { userId: null, email: null, token: null }, null, null],
      ]);
      assert.equal(entries[0].changes.duration.after, 10);
      assert.deepEqual(entries[2].changes, { email: { after: 'host@example.test' } });
      assert.deepEqual(entries[3].changes, { roleId: { after: 1 }, userEmail: { after: 'host@example.test' }, userCreated: true });
      for (const k of keys) assert.ok(!out.join('\n').includes(k), 'no license key in the log');
      assert.doesNotMatch(out.join('\n'), /host-password-1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
