// The single executable sends mail: nodemailer is bundled into dist/gridkeeper and works inside the SEA. A reset link
// asked over HTTP arrives at a real SMTP server on loopback, and it sets the password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, startBinary } from '../support/binary.ts';
import { startSmtp } from '../support/smtp.ts';

test('dist/gridkeeper sends a password reset mail over SMTP, and its link works', async () => {
  const smtp = await startSmtp();
  const { dir, exe } = isolatedBinary();
  try {
    const run = await startBinary(exe, ['--data-dir', join(dir, 'data'), '--public-url', 'https://gk.example.test'], {
      GRIDKEEPER_ADMIN_PASSWORD: 'binary-test-password', GRIDKEEPER_SMTP_URL: smtp.url, GRIDKEEPER_MAIL_FROM: 'gk@example.test',
    });
    const post = (path: string, body: unknown) => fetch(`${run.url}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    assert.equal((await post('/v1/auth/forgot-password?language=de', { email: 'admin@localhost' })).status, 204);
    const mail = await smtp.next(10_000);
    assert.deepEqual(mail.to, ['admin@localhost']);
    assert.equal(mail.from, 'gk@example.test');
    assert.equal(mail.parsed.subject, 'Setzen Sie Ihr gridkeeper-Passwort zurück');
    const token = /https:\/\/gk\.example\.test\/reset-password#token=([A-Za-z0-9_-]{43})/.exec(mail.parsed.text ?? '')?.[1];
    assert.ok(token, mail.parsed.text);
    assert.equal((await fetch(`${run.url}/reset-password`)).status, 200);
    assert.equal((await post('/v1/auth/reset-password', { token, newPassword: 'reset-by-mail-123' })).status, 204);
    assert.equal((await post('/auth/login', { username: 'admin@localhost', password: 'reset-by-mail-123' })).status, 200);
    assert.equal(await run.stop('SIGTERM'), 0);
  } finally {
    await smtp.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
