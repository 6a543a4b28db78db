// The console in a real browser (headless Chromium from Debian) against the built executable: sign in with 2FA, create
// a role and a member, create a device and edit a property, lose a race to a second session (412) and reapply, create
// and claim a license, plot telemetry written through the API, see a 429 explained, share the device with a role whose
// member then edits only what was granted, join a role with its password, delete a role with a preview, sign in with a
// recovery code and turn 2FA off, change the password, sign out. Every step's effect is checked through the API; the
// page must make no request outside the server, log no console error, and pass axe-core (no serious or critical
// violation) on each main screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateSync } from 'otplib';
import { isolatedBinary, startBinary } from '../support/binary.ts';
import { launchChromium, watchPage, assertAccessible, PAGE_TIMEOUT_MS } from '../support/chromium.ts';
import { httpClient } from '../support/http-client.ts';

const ADMIN = 'admin@localhost';
const PASSWORD = 'console-admin-password';

const totp = (secret: string, stepOffset = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + stepOffset * 30 });

/**
 * The previous step's code (the server accepts one step either side), made early enough in the current step that
 * the server still checks it in this step: under load the half-minute could turn between filling it in and the
 * server's check, and the code would then be two steps old.
 */
async function previousStepCode(secret: string): Promise<string> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return totp(secret, -1);
}

test('console end to end in Chromium', { timeout: 120_000 }, async () => {
  const { dir, exe } = isolatedBinary();
  const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD });
  const http = httpClient(run.url);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const watch = watchPage(page, run.url);

    // / redirects to the console; sign in with the password (2FA still off)
    await page.goto(`${run.url}/`);
    assert.equal(new URL(page.url()).pathname, '/console/');
    await assertAccessible(page, 'sign-in');
    await page.getByLabel('E-mail').fill(ADMIN);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();

    // Profile: turn 2FA on with the QR code's secret, keep the recovery codes
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await page.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await assertAccessible(page, 'profile, 2FA setup');
    await page.getByLabel('Code from the app').fill(await previousStepCode(secret));
    await page.getByRole('button', { name: 'Enable' }).click();
    const codeList = page.getByRole('list', { name: 'Recovery codes' });
    await codeList.waitFor();
    const codes = await codeList.getByRole('listitem').allTextContents();
    assert.equal(codes.length, 10);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('recovery codes left').waitFor();

    // sign out, then sign in again: password, then the TOTP step
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(ADMIN);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    await assertAccessible(page, 'second factor');
    await page.getByLabel('Authentication code').fill(totp(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();

    // the API session that checks the effects: a recovery code the console showed
    const login = await http.request('POST', '/auth/login', { body: { username: ADMIN, password: PASSWORD } });
    assert.equal(login.status, 401);
    assert.equal(login.body.code, 'TWO_FACTOR_REQUIRED');
    const second = await http.request('POST', '/user/2fa/recovery-code/authenticate', { token: login.body.partialAuthToken, body: { recoveryCode: codes[0] } });
    assert.equal(second.status, 200);
    const token = second.body.accessToken as string;

    // Roles: a child of root, and a member added by e-mail
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('link', { name: 'root', exact: true }).click();
    await page.getByLabel('Child role name').fill('Site Ghent');
    await page.getByRole('button', { name: 'Create child role' }).click();
    await page.getByRole('status').getByRole('link', { name: 'Site Ghent' }).click();
    await page.getByRole('heading', { name: 'Role Site Ghent' }).waitFor();
    await page.getByLabel('Member e-mail').fill('installer@example.com');
    await page.getByLabel('Password for a new user (optional)').fill('installer-password-1');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('button', { name: 'Remove installer@example.com' }).waitFor();
    await assertAccessible(page, 'roles');
    const roles = await http.request('POST', '/v1/role/query', { token, body: { filter: { name: ['Site Ghent'] } } });
    assert.equal(roles.body.role.length, 1);
    const siteId = roles.body.role[0].id as number;
    const members = await http.request('POST', `/v1/role/${siteId}/member/query`, { token, body: {} });
    assert.deepEqual(members.body.member.map((m: { userEmail: string }) => m.userEmail), ['installer@example.com']);
    const manages = await http.request('POST', '/v1/role/1/manages/query', { token, body: { filter: { childRoleId: [siteId] } } });
    assert.equal(manages.body.manages.length, 1);
    assert.equal(manages.body.manages[0].roleManagement, true);
    assert.equal((await http.request('POST', '/auth/login', { body: { username: 'installer@example.com', password: 'installer-password-1' } })).status, 200);

    // Devices: create a controller in the new role, then edit its name in the schema-driven form
    await page.getByRole('link', { name: 'Devices' }).click();
    await page.getByRole('button', { name: 'New device' }).click();
    const dialog = page.getByRole('dialog', { name: 'New device' });
    await dialog.getByLabel('Role that manages it').selectOption({ label: `Site Ghent (#${siteId})` });
    await dialog.getByLabel('Node id').fill('ctrl-ghent-1');
    await dialog.getByLabel('Name').fill('Ghent controller');
    await dialog.getByRole('button', { name: 'Create device' }).click();
    await page.getByRole('heading', { name: 'Ghent controller', level: 1 }).waitFor();
    const deviceId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByLabel('name', { exact: true }).fill('Ghent main controller');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved 1 change').waitFor();
    const read = async () => (await http.request('POST', '/v1/device/query', { token, body: { filter: { id: [deviceId] } } })).body.device[0];
    const afterEdit = await read();
    assert.equal(afterEdit.properties.name, 'Ghent main controller');
    assert.deepEqual(afterEdit.properties, { nodeType: 'smartgridController', isActive: true, nodeId: 'ctrl-ghent-1', name: 'Ghent main controller' });
    const monitors = await http.request('POST', `/v1/role/${siteId}/monitors/query`, { token, body: { filter: { deviceId: [deviceId] } } });
    assert.equal(monitors.body.monitors.length, 1);
    await assertAccessible(page, 'device');

    // a second session changes the device meanwhile: the console's save answers 412, shows it, and reapplies on request
    const other = await http.request('PATCH', `/v1/device/${deviceId}`, {
      token, headers: { 'if-unmodified-since': afterEdit.lastUpdate }, body: [{ op: 'replace', path: '/name', value: 'Renamed elsewhere' }],
    });
    assert.equal(other.status, 200);
    await page.getByLabel('softwareVersion').fill('2.4.1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('This device was changed by someone else since you opened it').waitFor();
    await page.getByText('At least one device was modified after the specified time').waitFor();
    assert.equal((await read()).properties.softwareVersion, undefined, 'nothing written on 412');
    assert.equal(await page.getByLabel('softwareVersion').inputValue(), '2.4.1', 'the draft is kept');
    await page.getByRole('button', { name: 'Reapply my changes on the new version' }).click();
    await page.getByText('Reapplied 1 change on the newer version').waitFor();
    const merged = await read();
    assert.equal(merged.properties.name, 'Renamed elsewhere');
    assert.equal(merged.properties.softwareVersion, '2.4.1');

    // Licenses: create one (root member) and claim it for the controller
    await page.getByRole('link', { name: 'Licenses' }).click();
    await page.getByLabel('Duration (days)').fill('730');
    await page.getByLabel('Solar kW').fill('12');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const keyCell = page.locator('td.mono').first();
    await keyCell.waitFor();
    const key = (await keyCell.textContent())!.trim();
    assert.match(key, /^GK-/);
    await page.getByLabel('License key', { exact: true }).fill(key);
    await page.getByLabel('Controller').selectOption('ctrl-ghent-1');
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    await page.getByText(`License ${key} is linked to ctrl-ghent-1.`).waitFor();
    // the list of every license (root members), filtered to the claimed ones
    await page.getByLabel('Show').selectOption('claimed');
    await page.locator('section', { hasText: 'All licenses' }).locator('td.mono', { hasText: key }).waitFor();
    await assertAccessible(page, 'licenses');
    const claimed = await http.request('GET', '/v1/license/controller/ctrl-ghent-1', { token });
    assert.equal(claimed.status, 200);
    assert.deepEqual(claimed.body.licenses.map((l: { key: string; solarKw: number; duration: number }) => [l.key, l.solarKw, l.duration]), [[key, 12, 730]]);

    // Telemetry written through the API, plotted from the device page
    const now = Date.now();
    const lines = Array.from({ length: 120 }, (_, i) => {
      const t = now - (120 - i) * 10_000;
      return `power,nodeId=ctrl-ghent-1 grid=${(Math.sin(i / 10) * 4).toFixed(3)},solar=${(i / 12).toFixed(3)} ${t}`;
    }).join('\n');
    const write = await http.request('POST', '/v1/telemetry?db=site&rp=autogen&precision=ms', { token, raw: lines, headers: { 'content-type': 'text/plain' } });
    assert.equal(write.status, 204, write.text);
    await page.getByRole('link', { name: 'Ghent controller' }).or(page.getByRole('link', { name: 'Renamed elsewhere' })).first().click();
    await page.getByRole('heading', { name: 'Renamed elsewhere', level: 1 }).waitFor();
    await page.getByText('Licenses of this controller').waitFor();
    await page.getByRole('cell', { name: key }).waitFor();
    await page.getByLabel('Namespace').selectOption('site/autogen');
    await page.getByLabel('Measurement').fill('power');
    await page.getByLabel('Fields').fill('grid, solar');
    await page.getByRole('button', { name: 'Plot' }).click();
    await page.getByRole('img', { name: /Plot of grid, solar: 240 values/ }).waitFor();
    await page.getByText(/cost \d+ · bucket capacity remaining \d+/).waitFor();
    const inked = await page.evaluate(() => {
      const canvas = document.querySelector('figure.plot canvas') as HTMLCanvasElement;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n;
    });
    assert.ok(inked > 500, `the plot's canvas has ink (${inked} pixels)`);
    await assertAccessible(page, 'device with telemetry');

    // a day of a 10-second series is more than 1,500 points: the console asks for 200 bucket means in one request
    await page.getByLabel('Range').selectOption('86400');
    await page.getByRole('button', { name: 'Plot' }).click();
    await page.getByText(/200 queries · cost \d+ · bucket capacity remaining \d+ · showing means of 200 buckets/).waitFor();
    const label = await page.locator('figure.plot [role=img]').getAttribute('aria-label');
    const means = Number(/^Plot of mean grid, mean solar: (\d+) values$/.exec(label ?? '')?.[1]);
    assert.ok(means >= 4 && means <= 8, `two fields over the 20 minutes of data: ${label}`);

    // A full bucket: on the free tier (capacity 100, leaks 100/min) the API session fills it with the cheapest requests
    // (an empty range costs 2) until a 429; the console's next plot (a 4-hour range, cost ~18) is refused and says how long to wait
    assert.equal((await http.request('PUT', '/v1/user/admin%40localhost/tier', { token, body: { tier: 'free' } })).status, 204);
    const empty = { select: ['grid'], from: { measurement: 'power', database: 'site', retentionPolicy: 'autogen' },
      where: { time: [{ operator: '>=', value: now }, { operator: '<', value: now }], tags: { nodeId: 'ctrl-ghent-1' } } };
    let filled = 0;
    while ((await http.request('POST', '/v1/telemetry/query', { token, body: empty })).status === 200) filled++;
    assert.ok(filled >= 40 && filled <= 60, `the bucket took ${filled} requests of cost 2`);
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Range').selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill(local(Date.now() - 4 * 3600_000));
    await page.getByLabel('To', { exact: true }).fill(local(Date.now() + 60_000));
    await page.getByRole('button', { name: 'Plot' }).click();
    await page.getByText(/\(429 RATE_LIMITED\) — try again in \d+ s\./).waitFor();
    await page.getByText(/1 query · cost \d+ · bucket capacity remaining \d+/).waitFor();
    assert.equal((await http.request('PUT', '/v1/user/admin%40localhost/tier', { token, body: { tier: 'basic' } })).status, 204);

    // Sharing: the device page grants a role read access to nodeId and edit access to name; its member sees exactly that
    const none = { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };
    const viewers = await http.request('POST', '/v1/role?parentRoleId=1', { token, body: { manages: { ...none, roleManagement: true, userManagement: true }, role: { name: 'Viewers', selfRights: none } } });
    assert.equal(viewers.status, 200);
    const viewersId = viewers.body.role.id as number;
    assert.equal((await http.request('PUT', `/v1/role/${viewersId}/member?userEmail=viewer%40example.com&password=viewer-password-1`, { token, body: {} })).status, 200);
    await page.getByRole('button', { name: 'Share with a role' }).click();
    const share = page.getByRole('dialog', { name: 'Share this device with a role' });
    await share.getByLabel('Role').selectOption({ label: `Viewers (#${viewersId})` });
    await share.getByLabel('Properties it may read').fill('nodeId');
    await share.getByLabel('Properties it may edit').fill('name');
    await share.getByRole('button', { name: 'Save access' }).click();
    await page.getByText('reads nodeId · edits name').waitFor();
    const shared = await http.request('POST', `/v1/role/${viewersId}/monitors/query`, { token, body: {} });
    assert.deepEqual(shared.body.monitors.map((m: { deviceId: number; monitorManagement: boolean; reads: string[]; edits: string[] }) => [m.deviceId, m.monitorManagement, m.reads, m.edits]),
      [[deviceId, false, ['nodeId'], ['name']]]);

    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const viewer = await viewerContext.newPage();
    viewer.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const viewerWatch = watchPage(viewer, run.url);
    await viewer.goto(`${run.url}/console/devices/${deviceId}`);
    await viewer.getByLabel('E-mail').fill('viewer@example.com');
    await viewer.getByLabel('Password').fill('viewer-password-1');
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.getByRole('heading', { name: 'Renamed elsewhere', level: 1 }).waitFor();
    await viewer.getByText('limited rights').waitFor();
    assert.equal(await viewer.getByLabel('nodeId').getAttribute('readonly'), '');
    assert.equal(await viewer.getByLabel('name', { exact: true }).getAttribute('readonly'), null);
    assert.equal(await viewer.getByLabel('softwareVersion').count(), 0, 'a property the viewer may not read is not shown');
    assert.equal(await viewer.getByRole('button', { name: 'Share with a role' }).count(), 0);
    await viewer.getByLabel('name', { exact: true }).fill('Ghent controller (viewer)');
    await viewer.getByRole('button', { name: 'Save changes' }).click();
    await viewer.getByText('Saved 1 change').waitFor();
    assert.equal((await read()).properties.name, 'Ghent controller (viewer)');
    await assertAccessible(viewer, 'device, limited rights');
    await viewerContext.close();
    assert.deepEqual([viewerWatch.outside, viewerWatch.errors, viewerWatch.failures], [[], [], []]);

    // removing the device's last managing relation would delete the device: the console asks first, and Cancel keeps it
    await page.getByRole('button', { name: 'Remove the access of Site Ghent' }).click();
    const guard = page.getByRole('dialog', { name: 'Delete this device?' });
    await guard.getByText(`Removing it deletes device #${deviceId}`).waitFor();
    await guard.getByRole('button', { name: 'Cancel' }).click();
    await guard.waitFor({ state: 'hidden' });
    assert.equal((await read()).id, deviceId);

    // joining a role with its password puts it under one of the user's roles
    const partner = await http.request('POST', '/v1/role?parentRoleId=1', { token, body: {
      manages: { ...none, roleManagement: true }, role: { name: 'Partner installer', selfRights: none, password: 'partner-join-password' } } });
    assert.equal(partner.status, 200);
    const partnerId = partner.body.role.id as number;
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('button', { name: 'Join a role with its password' }).click();
    const join = page.getByRole('dialog', { name: 'Join a role with its password' });
    await join.getByLabel('Your role (the parent)').selectOption({ label: `Viewers (#${viewersId})` });
    await join.getByLabel('Id of the role to join').fill(String(partnerId));
    await join.getByLabel('Its join password').fill('partner-join-password');
    await join.getByRole('button', { name: 'Join', exact: true }).click();
    await join.waitFor({ state: 'hidden' });
    await page.locator('ul.tree').getByRole('link', { name: 'Partner installer' }).nth(1).waitFor(); // under root and under Viewers
    const joined = await http.request('POST', `/v1/role/${viewersId}/manages/query`, { token, body: { filter: { childRoleId: [partnerId] } } });
    assert.deepEqual(joined.body.manages.map((m: { parentRoleId: number; roleManagement: boolean; deviceManagement: boolean }) => [m.parentRoleId, m.roleManagement, m.deviceManagement]),
      [[viewersId, true, true]]);

    // Roles: deleting root -> Site Ghent previews what goes with it (the role, and the device it alone manages)
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('link', { name: 'Site Ghent' }).click();
    await page.getByRole('button', { name: 'Delete relation…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this manages relation?' });
    await confirm.getByText('1 role(s): Site Ghent').waitFor();
    await confirm.getByText(`1 device(s) left without a managing role: #${deviceId}`).waitFor();
    await assertAccessible(page, 'deletion preview');
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm.getByText(/^Deleted \d+ relation\(s\) and 2 role\(s\)\/device\(s\)/).waitFor();
    await confirm.getByRole('button', { name: 'Close' }).click();
    await page.getByText('Select a role to see its rights').waitFor();
    assert.deepEqual((await http.request('POST', '/v1/role/query', { token, body: { filter: { id: [siteId] } } })).body, { role: [] });
    assert.deepEqual((await http.request('POST', '/v1/device/query', { token, body: { filter: { id: [deviceId] } } })).body, { device: [] });

    // sign in again with a recovery code instead of the app; that step's sudo token lets the profile turn 2FA off at once
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').fill(ADMIN);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(codes[1]);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByText('8 recovery codes left').waitFor();
    await page.getByRole('button', { name: 'Turn off 2FA' }).click();
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).waitFor();
    assert.equal((await http.request('GET', '/user/2fa', { token })).body.enabled, false);

    // a new password: every session ends, the console returns to the sign-in page, the new password works
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill(`${PASSWORD}-2`);
    await page.getByLabel('New password again').fill(`${PASSWORD}-2`);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed.').waitFor();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal((await http.request('POST', '/auth/login', { body: { username: ADMIN, password: PASSWORD } })).body.code, 'PASSWORD_INCORRECT');
    await page.getByLabel('E-mail').fill(ADMIN);
    await page.getByLabel('Password').fill(`${PASSWORD}-2`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Profile', level: 1 }).waitFor(); // back where the user was

    // sign out: the refresh token is gone from the page and revoked on the server
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);

    assert.deepEqual(watch.outside, [], 'no request outside the server');
    // the only failed responses are the ones the scenario provokes; the browser reports each as a console error
    assert.deepEqual(watch.failures, ['POST /auth/login 401', `PATCH /v1/device/${deviceId} 412`, 'POST /v1/telemetry/query 429', 'POST /auth/login 401']);
    assert.deepEqual(watch.errors, [
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
      'Failed to load resource: the server responded with a status of 412 (Precondition Failed)',
      'Failed to load resource: the server responded with a status of 429 (Too Many Requests)',
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);
  } finally {
    await browser.close();
    http.close();
    await run.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
