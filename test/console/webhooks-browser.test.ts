// The console's Webhooks page in Chromium against the built executable: create a webhook for the root role (its secret
// shown once), send a test event that the running service delivers to a local receiver, read the delivery log and its
// attempts, replay the event, rotate the secret, disable the endpoint — each effect checked through the API and at the
// receiver; no request outside the server, no console error, axe-core clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { isolatedBinary, startBinary } from '../support/binary.ts';
import { launchChromium, watchPage, until, assertAccessible, signInToConsole, PAGE_TIMEOUT_MS } from '../support/chromium.ts';
import { httpClient } from '../support/http-client.ts';
import { startReceiver } from '../events/receiver.ts';

const ADMIN = 'admin@localhost';
const PASSWORD = 'console-admin-password';

test('console: webhooks in Chromium', { timeout: 120_000 }, async () => {
  const { dir, exe } = isolatedBinary();
  const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true' });
  const rx = await startReceiver();
  const http = httpClient(run.url);
  const browser = await launchChromium();
  try {
    const refresh = (await http.request('POST', '/auth/login', { body: { username: ADMIN, password: PASSWORD } })).text;
    const access = async () => (await http.request('GET', '/auth/accesstoken', { token: refresh })).text;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const watch = watchPage(page, run.url);
    await signInToConsole(page, run.url, ADMIN, PASSWORD);

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('building management');
    await page.getByLabel('URL').fill(rx.url);
    await page.getByRole('button', { name: 'Create' }).click();
    const secret = (await page.locator('code.secret').textContent())!.trim();
    assert.match(secret, /^whsec_/);
    await assertAccessible(page, 'webhooks');
    const listed = await http.request('POST', '/v1/webhook/query', { token: await access(), body: {} });
    assert.deepEqual(listed.body.webhook.map((w: any) => [w.name, w.url, w.enabled]), [['building management', rx.url, true]]);
    const id = listed.body.webhook[0].id;

    await page.getByRole('button', { name: 'Open building management' }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText(/Test event evt_\S+ queued/).waitFor();
    await until(() => rx.received.length === 1, 'the test event at the receiver');
    const event = new Webhook(secret).verify(rx.received[0].body, rx.received[0].headers) as any;
    assert.equal(event.type, 'subscription.tested');
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh log' }).click();
      return (await page.getByRole('cell', { name: 'delivered' }).count()) === 1;
    }, 'the delivery log to say delivered');
    await page.getByRole('button', { name: 'Attempts' }).click();
    await page.getByText(/ms · 204/).waitFor();
    await assertAccessible(page, 'webhook delivery log');

    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.getByText('1 event queued again.').waitFor();
    await until(() => rx.received.length === 2, 'the replayed event at the receiver');
    assert.equal(rx.received[1].json.id, event.id, 'a replay carries the same event id');

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/New signing secret, shown this once: whsec_/).waitFor();
    await page.getByRole('button', { name: 'Disable' }).click();
    await until(async () => (await http.request('GET', `/v1/webhook/${id}`, { token: await access() })).body.webhook.enabled === false, 'the webhook disabled');
    await page.getByText(/Disabled .*: disabled by its owner/).waitFor();

    assert.deepEqual(watch.outside, [], 'no request outside the server');
    assert.deepEqual(watch.failures, []);
    assert.deepEqual(watch.errors, []);
  } finally {
    await browser.close();
    await rx.close();
    await run.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
