// Forgot password (POST /v1/auth/forgot-password) and reset (POST /v1/auth/reset-password) against a real SMTP server
// on loopback: what arrives (recipient, language, link), that the link works once, expiry, the one-a-minute limit,
// disposable domains, and the appliance without SMTP (log line, `gridkeeper user reset-link`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { makeTestApp, assertError, type TestApp } from '../support/app.ts';
import { startSmtp, type TestSmtp } from '../support/smtp.ts';
import { runCli } from '../../src/boot/cli.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import { createApp } from '../../src/boot/app.ts';
import { issueResetToken } from '../../src/auth/password-reset.ts';

const PUBLIC = 'https://grid.example.test';
const MINUTE = 60_000;
const LINK = /https:\/\/grid\.example\.test\/reset-password#token=([A-Za-z0-9_-]{43})/;

let smtp: TestSmtp;
before(async () => { smtp = await startSmtp(); });
after(async () => { await smtp.close(); });

async function appWithMail(env: Record<string, string> = {}): Promise<TestApp> {
  return makeTestApp({ env: { GRIDKEEPER_SMTP_URL: smtp.url, GRIDKEEPER_MAIL_FROM: 'Gridkeeper <noreply@grid.example.test>', GRIDKEEPER_PUBLIC_URL: `${PUBLIC}/`, ...env } });
}

const forgot = (t: TestApp, email: unknown, query = '') => t.request('POST', `/v1/auth/forgot-password${query}`, { body: { email } });
const reset = (t: TestApp, token: string, newPassword: string) => t.request('POST', '/v1/auth/reset-password', { body: { token, newPassword } });
const login = (t: TestApp, username: string, password: string) => t.request('POST', '/auth/login', { body: { username, password } });
const sha256 = (s: string) => createHash('sha256').update(s).digest();

function capturingLogger(): Logger & { lines: { level: string; msg: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => { lines.push({ level, msg, fields }); };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('forgot password: the mail', () => {
  test('happy: one mail to the user in the asked language, through the configured server; the link resets the password once', async () => {
    const t = await appWithMail();
    const user = await t.createUser('Anna@Example.test', 'old-password-123');
    const oldRefresh = (await login(t, 'anna@example.test', 'old-password-123')).text;
    assert.equal((await t.request('GET', '/auth/accesstoken', { token: oldRefresh })).status, 200);

    const res = await forgot(t, ' ANNA@example.test ', '?origin=insights&language=nl');
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    const mail = await smtp.next();
    // to the stored address (the mail library lower-cases the domain, which is case-insensitive)
    assert.deepEqual(mail.to, ['Anna@example.test']);
    assert.equal(mail.from, 'noreply@grid.example.test');
    assert.equal(mail.user, 'mailer', 'the credentials of GRIDKEEPER_SMTP_URL were used');
    assert.equal(mail.parsed.subject, 'Stel je gridkeeper-wachtwoord opnieuw in');
    assert.equal(mail.parsed.headers.get('content-language'), 'nl');
    assert.match(mail.parsed.text ?? '', /binnen 60 minuten/);
    assert.match(mail.parsed.text ?? '', /De link werkt één keer/);
    const token = LINK.exec(mail.parsed.text ?? '')?.[1];
    assert.ok(token, mail.parsed.text);

    // stored only as a hash
    const rows = await t.deps.db.all(sql<any>`SELECT user_id, token_hash, expires_at, used_at FROM password_reset_tokens`);
    assert.deepEqual(rows, [{ user_id: user.id, token_hash: sha256(token), expires_at: t.clock.now() + 60 * MINUTE, used_at: null }]);
    assert.equal(JSON.stringify(await t.deps.db.all(sql`SELECT * FROM password_reset_tokens`)).includes(token), false);

    // the link opens the reset page, which posts the token from the fragment
    const page = await t.request('GET', new URL(LINK.exec(mail.parsed.text!)![0]).pathname);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.text, /fetch\('\/v1\/auth\/reset-password'/);
    assert.match(page.text, /location\.hash/);

    assert.equal((await reset(t, token, 'new-password-456')).status, 204);
    assert.equal((await login(t, 'anna@example.test', 'new-password-456')).status, 200);
    assertError(await login(t, 'anna@example.test', 'old-password-123'), 401, 'PASSWORD_INCORRECT');
    assertError(await t.request('GET', '/auth/accesstoken', { token: oldRefresh }), 401, 'UNAUTHENTICATED');
    // single use
    assert.equal(assertError(await reset(t, token, 'third-password-789'), 400, 'RESET_TOKEN_INVALID').message, 'the reset token is unknown, used or expired');
    assert.equal((await login(t, 'anna@example.test', 'new-password-456')).status, 200);
    await t.close();
  });

  test('languages: fr, de (also de-AT), and English for anything else or none', async () => {
    const t = await appWithMail();
    await t.createUser('multi@example.test');
    const cases: [string, string, RegExp][] = [
      ['?language=fr', 'Réinitialisez votre mot de passe gridkeeper', /dans les 60 minutes/],
      ['?language=de-AT', 'Setzen Sie Ihr gridkeeper-Passwort zurück', /innerhalb von 60 Minuten/],
      ['?language=es', 'Reset your gridkeeper password', /within 60 minutes/],
      ['', 'Reset your gridkeeper password', /The link works once/],
    ];
    for (const [query, subject, text] of cases) {
      t.clock.advance(MINUTE);
      assert.equal((await forgot(t, 'multi@example.test', query)).status, 204);
      const mail = await smtp.next();
      assert.equal(mail.parsed.subject, subject, query);
      assert.match(mail.parsed.text ?? '', text);
      assert.match(mail.parsed.text ?? '', LINK);
    }
    await t.close();
  });

  test('an unknown address gets the same 204 and no mail; only the existing user\'s request sends one', async () => {
    const t = await appWithMail();
    await t.createUser('known@example.test');
    const before = smtp.received.length;
    const unknown = await forgot(t, 'nobody@example.test');
    t.clock.advance(MINUTE);
    const known = await forgot(t, 'known@example.test');
    assert.deepEqual([unknown.status, unknown.text], [known.status, known.text]);
    const mail = await smtp.next();
    assert.deepEqual(mail.to, ['known@example.test']);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(smtp.received.length, before + 1, 'exactly one mail went out');
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM password_reset_tokens`))!.n, 1);
    await t.close();
  });

  test('expiry: a token is refused after 60 minutes; a newer link voids the older one; the password is left alone', async () => {
    const t = await appWithMail();
    await t.createUser('exp@example.test', 'old-password-123');
    assert.equal((await forgot(t, 'exp@example.test')).status, 204);
    const first = LINK.exec((await smtp.next()).parsed.text ?? '')![1];
    t.clock.advance(MINUTE);
    assert.equal((await forgot(t, 'exp@example.test')).status, 204);
    const second = LINK.exec((await smtp.next()).parsed.text ?? '')![1];
    assertError(await reset(t, first, 'new-password-456'), 400, 'RESET_TOKEN_INVALID');
    t.clock.advance(60 * MINUTE);
    assertError(await reset(t, second, 'new-password-456'), 400, 'RESET_TOKEN_INVALID');
    assert.equal((await login(t, 'exp@example.test', 'old-password-123')).status, 200);
    // one millisecond before the end it still works
    t.clock.advance(MINUTE);
    assert.equal((await forgot(t, 'exp@example.test')).status, 204);
    const third = LINK.exec((await smtp.next()).parsed.text ?? '')![1];
    t.clock.advance(60 * MINUTE - 1);
    assert.equal((await reset(t, third, 'new-password-456')).status, 204);
    await t.close();
  });
});

describe('reset password: races', () => {
  test('two resets racing with one token: exactly one wins, and its password is the one set', async () => {
    const t = await makeTestApp();
    await t.createUser('race@example.test', 'old-password-123');
    const userId = (await t.deps.db.get(sql<{ id: number }>`SELECT id FROM users WHERE email = 'race@example.test'`))!.id;
    const token = await issueResetToken(t.deps.db, userId, t.clock.now());
    const answers = await Promise.all([reset(t, token, 'first-password-1'), reset(t, token, 'second-password-2')]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [204, 400]);
    const winner = answers[0].status === 204 ? 'first-password-1' : 'second-password-2';
    assert.equal((await login(t, 'race@example.test', winner)).status, 200);
    await t.close();
  });
});

describe('forgot password: limits and validation', () => {
  test('429 when the address or the client address asked less than 60 s ago (known or not); 204 again after', async () => {
    const t = await appWithMail();
    assert.equal((await forgot(t, 'a@example.test')).status, 204);
    t.clock.advance(20_000);
    const again = assertError(await forgot(t, 'A@example.test'), 429, 'TOO_MANY_RESET_REQUESTS');
    assert.equal(again.retryAfter, 40);
    const other = await forgot(t, 'b@example.test');
    assertError(other, 429, 'TOO_MANY_RESET_REQUESTS');
    assert.equal(other.headers.get('retry-after'), '40');
    t.clock.advance(40_000);
    assert.equal((await forgot(t, 'b@example.test')).status, 204);
    assertError(await forgot(t, 'a@example.test'), 429, 'TOO_MANY_RESET_REQUESTS');
    await t.close();
  });

  test('403 DISPOSABLE_EMAIL for disposable-mail domains (and their subdomains); not counted against the limit', async () => {
    const t = await appWithMail();
    await t.createUser('user@mailinator.com');
    assertError(await forgot(t, 'user@mailinator.com'), 403, 'DISPOSABLE_EMAIL');
    assertError(await forgot(t, 'x@inbox.YOPmail.com'), 403, 'DISPOSABLE_EMAIL');
    assert.equal((await forgot(t, 'x@notmailinator.com')).status, 204, 'a look-alike domain is not on the list');
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM password_reset_tokens`))!.n, 0);
    await t.close();
  });

  test('validation: 400 naming the field, before any limit or lookup', async () => {
    const t = await appWithMail();
    assert.equal(assertError(await forgot(t, 'not-an-address'), 400, 'BAD_REQUEST').message, 'email: expected an e-mail address');
    assert.equal(assertError(await t.request('POST', '/v1/auth/forgot-password', { body: {} }), 400, 'BAD_REQUEST').message, 'email: required');
    assert.equal(assertError(await t.request('POST', '/v1/auth/forgot-password', { body: { email: 'a@b.c', x: 1 } }), 400, 'BAD_REQUEST').message, 'x: unknown field');
    assert.equal(assertError(await forgot(t, 'a@b.c', '?lang=nl'), 400, 'BAD_REQUEST').message, 'query.lang: unknown field');
    assertError(await forgot(t, 'a@b.c', `?language=${'x'.repeat(36)}`), 400, 'BAD_REQUEST');
    assertError(await t.request('POST', '/v1/auth/forgot-password', { raw: '{"email":"a@b.c"}', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal((await forgot(t, 'a@b.c')).status, 204, 'none of the refused requests counted');
    assert.equal(assertError(await reset(t, 'x', 'short'), 400, 'BAD_REQUEST').message, 'newPassword: expected at least 10 characters');
    assert.equal(assertError(await t.request('POST', '/v1/auth/reset-password', { body: { newPassword: 'long-enough-1' } }), 400, 'BAD_REQUEST').message, 'token: required');
    assertError(await reset(t, 'made-up-token', 'long-enough-1'), 400, 'RESET_TOKEN_INVALID');
    await t.close();
  });
});

describe('forgot password without mail', () => {
  test('no SMTP configured: still 204, a token is stored, and the log says no mail could be sent', async () => {
    const t = await makeTestApp();
    const log = capturingLogger();
    t.deps.log = log;
    const user = await t.createUser('nomail@example.test');
    assert.equal((await forgot(t, 'nomail@example.test')).status, 204);
    const warn = log.lines.find((l) => l.level === 'warn');
    assert.ok(warn && /no mail can be sent/.test(warn.msg) && /reset-link/.test(warn.msg), JSON.stringify(log.lines));
    assert.deepEqual(warn.fields, { userId: user.id });
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM password_reset_tokens WHERE user_id = ${user.id}`))!.n, 1);
    await t.close();
  });

  test('an unreachable SMTP server: still 204; the failure is logged, nothing crashes', async () => {
    const dead = await startSmtp();
    const url = dead.url;
    await dead.close();
    const t = await makeTestApp({ env: { GRIDKEEPER_SMTP_URL: url } });
    const log = capturingLogger();
    t.deps.log = log;
    await t.createUser('down@example.test');
    assert.equal((await forgot(t, 'down@example.test')).status, 204);
    const deadline = Date.now() + 5000;
    while (!log.lines.some((l) => l.level === 'error') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const error = log.lines.find((l) => l.level === 'error');
    assert.equal(error?.msg, 'password reset mail could not be sent');
    assert.doesNotMatch(JSON.stringify(log.lines), /smtp-secret-1/, 'the SMTP password is not logged');
    await t.close();
  });

  test('gridkeeper user reset-link prints a link that works; unknown users exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-reset-link-'));
    try {
      const env = { GRIDKEEPER_ADMIN_PASSWORD: 'admin-password-123', GRIDKEEPER_PUBLIC_URL: 'https://appliance.local:8443' };
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
      assert.equal(await runCli(['migrate', '--data-dir', dir], env, io), 0);
      assert.equal(await runCli(['user', 'add', 'cli@example.test', '--password', 'old-password-123', '--data-dir', dir], env, io), 0);
      out.length = 0;
      assert.equal(await runCli(['user', 'reset-link', 'CLI@example.test', '--data-dir', dir], env, io), 0, err.join('\n'));
      assert.equal(out.length, 1);
      const token = /^https:\/\/appliance\.local:8443\/reset-password#token=([A-Za-z0-9_-]{43})$/.exec(out[0])?.[1];
      assert.ok(token, out[0]);
      assert.equal(await runCli(['user', 'reset-link', 'ghost@example.test', '--data-dir', dir], env, io), 2);
      assert.equal(err.at(-1), 'gridkeeper: user reset-link: no user ghost@example.test');
      assert.equal(await runCli(['user', 'reset-link', '--data-dir', dir], env, io), 2);
      assert.equal(err.at(-1), 'gridkeeper: user reset-link: expected one e-mail address');
      out.length = 0;
      assert.equal(await runCli(['--help'], {}, io), 0);
      assert.match(out.join('\n'), /user reset-link <email>/);
      assert.match(out.join('\n'), /GRIDKEEPER_SMTP_URL/);

      const { config } = parseConfig({ ...env, GRIDKEEPER_DATA_DIR: dir }, []);
      const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
      try {
        const { deps } = await createDeps({ config, db, log: createLogger('error') });
        const { app } = createApp(deps);
        const post = (path: string, body: unknown) => app.request(path, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
        }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
        assert.equal((await post('/v1/auth/reset-password', { token, newPassword: 'new-password-456' })).status, 204);
        assert.equal((await post('/auth/login', { username: 'cli@example.test', password: 'new-password-456' })).status, 200);
      } finally {
        await db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mail settings', () => {
  test('GRIDKEEPER_SMTP_URL, GRIDKEEPER_MAIL_FROM, GRIDKEEPER_PUBLIC_URL are checked; the SMTP password is never echoed', () => {
    const parse = (env: Record<string, string>) => parseConfig(env, []).config;
    const c = parse({ GRIDKEEPER_SMTP_URL: 'smtps://u:p@mail.example.test:465', GRIDKEEPER_MAIL_FROM: 'Grid <grid@example.test>', GRIDKEEPER_PUBLIC_URL: 'https://x.test/gk/' });
    assert.deepEqual([c.smtpUrl, c.mailFrom, c.publicUrl], ['smtps://u:p@mail.example.test:465', 'Grid <grid@example.test>', 'https://x.test/gk']);
    assert.deepEqual([parse({}).smtpUrl, parse({}).mailFrom, parse({}).publicUrl], [undefined, 'gridkeeper@localhost', undefined]);
    assert.throws(() => parse({ GRIDKEEPER_SMTP_URL: 'http://u:hunter22@mail.test' }), (e: Error) => e.message.startsWith('GRIDKEEPER_SMTP_URL: expected smtp://') && !e.message.includes('hunter22'));
    assert.throws(() => parse({ GRIDKEEPER_MAIL_FROM: 'nobody' }), /GRIDKEEPER_MAIL_FROM: expected an e-mail address or Name <address>/);
    assert.throws(() => parse({ GRIDKEEPER_PUBLIC_URL: 'ftp://x' }), /GRIDKEEPER_PUBLIC_URL/);
    assert.equal(parseConfig({}, ['--public-url', 'http://10.0.0.2:8080']).config.publicUrl, 'http://10.0.0.2:8080');
  });
});
