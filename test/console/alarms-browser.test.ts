// The console's alarms in Chromium against the built executable: a rule made on a device page from its declared
// series, a point over the threshold written through the API and evaluated by the running service, the device's alarm
// badge, the Alarms page (active first) with acknowledge and clear, the rule edited (threshold, recipients), a rule of
// every device of a nodeType — each effect checked through the API; no request outside the server, no console error,
// axe-core clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, startBinary } from '../support/binary.ts';
import { launchChromium, watchPage, until, assertAccessible, signInToConsole, PAGE_TIMEOUT_MS } from '../support/chromium.ts';
import { httpClient } from '../support/http-client.ts';

const ADMIN = 'admin@localhost';
const PASSWORD = 'console-admin-password';

test('console: alarms in Chromium', { timeout: 120_000 }, async () => {
  const { dir, exe } = isolatedBinary();
  const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD });
  const http = httpClient(run.url);
  const browser = await launchChromium();
  try {
    const refresh = (await http.request('POST', '/auth/login', { body: { username: ADMIN, password: PASSWORD } })).text;
    const access = async () => (await http.request('GET', '/auth/accesstoken', { token: refresh })).text;
    const made = await http.request('POST', '/v1/device?roleId=1', { token: await access(), body: { properties: {
      name: 'grid meter', nodeId: 'gm-1', nodeType: 'powerMeter',
      nodeInfluxSeries: [{ measurement: 'power', database: 'energy', retentionPolicy: 'autogen', fields: ['p'] }],
    } } });
    assert.equal(made.status, 200, made.text);
    const deviceId = made.body.device.id;
    const writePoint = async (p: number) => {
      const res = await http.request('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', { token: await access(), raw: `power,nodeId=gm-1 p=${p} ${Date.now()}`, headers: { 'content-type': 'text/plain' } });
      assert.equal(res.status, 204, res.text);
    };
    await writePoint(3);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const watch = watchPage(page, run.url);
    await signInToConsole(page, run.url, ADMIN, PASSWORD);

    await page.goto(`${run.url}/console/devices/${deviceId}`);
    await page.getByRole('heading', { name: 'grid meter', level: 1 }).waitFor();
    await page.getByText('No rule watches this device.').waitFor();
    await page.getByLabel('Rule name').fill('overload');
    await page.getByLabel('Threshold').fill('10');
    await page.getByLabel('Severity').selectOption('critical');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText(/power\.p above 10/).waitFor();
    const rules = await http.request('POST', '/v1/alarm/rule/query', { token: await access(), body: {} });
    assert.deepEqual(rules.body.rules.map((r: any) => [r.name, r.deviceIds, r.condition, r.severity]), [['overload', [deviceId], { type: 'above', value: 10, hysteresis: 0 }, 'critical']]);
    await assertAccessible(page, 'device page with its alarms');

    await writePoint(42);
    let alarmId = 0;
    await until(async () => {
      const q = await http.request('POST', '/v1/alarm/query', { token: await access(), body: {} });
      alarmId = q.body.alarms[0]?.id ?? 0;
      return alarmId > 0;
    }, 'the alarm raised by the running service');
    await page.reload();
    await page.getByRole('link', { name: '1 active alarm' }).waitFor();

    await page.getByRole('link', { name: 'Alarms', exact: true }).click();
    await page.getByRole('heading', { name: 'Alarms', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'active, unacknowledged' }).waitFor();
    await assertAccessible(page, 'alarms');
    await page.getByRole('button', { name: `Acknowledge alarm ${alarmId}` }).click();
    await page.getByRole('cell', { name: /active, acknowledged/ }).waitFor();
    const acked = await http.request('POST', '/v1/alarm/query', { token: await access(), body: { filter: { id: [alarmId] } } });
    assert.deepEqual([acked.body.alarms[0].state, acked.body.alarms[0].ackBy], ['active_ack', ADMIN]);
    await page.getByRole('button', { name: `Clear alarm ${alarmId}` }).click();
    await page.getByText('No alarms.').waitFor();
    await page.getByLabel('Show cleared alarms too').check();
    await page.getByRole('cell', { name: /cleared, acknowledged/ }).waitFor();
    const cleared = await http.request('POST', '/v1/alarm/query', { token: await access(), body: { filter: { id: [alarmId] } } });
    assert.deepEqual([cleared.body.alarms[0].state, cleared.body.alarms[0].clearedBy], ['cleared_ack', ADMIN]);
    await assertAccessible(page, 'alarms with cleared ones');

    // the rule edited on the device page: a new threshold and a recipient among the role's members
    await page.goto(`${run.url}/console/devices/${deviceId}`);
    await page.getByRole('button', { name: 'Edit rule overload' }).click();
    await page.getByRole('heading', { name: 'Edit rule overload', level: 3 }).waitFor();
    await page.getByLabel('Threshold').fill('20');
    await page.getByLabel('Hysteresis').fill('2');
    await page.getByRole('checkbox', { name: ADMIN }).check();
    await assertAccessible(page, 'a rule edited');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByText(/power\.p above 20 \(±2\)/).waitFor();
    const edited = await http.request('POST', '/v1/alarm/rule/query', { token: await access(), body: {} });
    assert.deepEqual(edited.body.rules.map((r: any) => [r.name, r.deviceIds, r.nodeType, r.condition, r.severity, r.notify.map((n: any) => n.userEmail)]),
      [['overload', [deviceId], null, { type: 'above', value: 20, hysteresis: 2 }, 'critical', [ADMIN]]]);

    // a rule of every device the role monitors, narrowed by nodeType
    await page.getByLabel('Rule name').fill('meters offline');
    await page.getByRole('radio', { name: 'Every device the role monitors' }).check();
    await page.getByLabel('Only devices of nodeType').fill('powerMeter');
    await page.getByLabel('Condition').selectOption('noData');
    await page.getByLabel('Seconds without data').fill('300');
    await page.getByRole('checkbox', { name: ADMIN }).check();
    await assertAccessible(page, 'a rule of every device of a nodeType');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('(every device of its role of nodeType powerMeter)').waitFor();
    const all = await http.request('POST', '/v1/alarm/rule/query', { token: await access(), body: {} });
    const offline = all.body.rules.find((r: any) => r.name === 'meters offline');
    assert.deepEqual([offline.roleId, offline.deviceIds, offline.nodeType, offline.condition, offline.notify.map((n: any) => n.userEmail)],
      [1, null, 'powerMeter', { type: 'noData', seconds: 300 }, [ADMIN]]);

    assert.deepEqual(watch.outside, [], 'no request outside the server');
    assert.deepEqual(watch.failures, []);
    assert.deepEqual(watch.errors, []);
  } finally {
    await browser.close();
    await run.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
