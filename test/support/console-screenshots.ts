// Regenerates the console screenshots in docs/console/ from the built executable with a small demo installation:
//   npm run build && node --import ./test/support/register.mjs test/support/console-screenshots.ts
// (or `npm run console:screenshots`). Everything is seeded through the public API, like any client would.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isolatedBinary, startBinary } from './binary.ts';
import { launchChromium } from './chromium.ts';
import { httpClient, type HttpClient } from './http-client.ts';

const OUT = fileURLToPath(new URL('../../docs/console/', import.meta.url));
const ADMIN = 'admin@localhost';
const PASSWORD = 'screenshot-admin-password';
const FLAGS = { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: true, alarmManagement: false };
const NONE = { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };

async function ok(http: HttpClient, token: string, method: string, path: string, body?: unknown, raw?: string) {
  const res = await http.request(method, path, raw !== undefined ? { token, raw, headers: { 'content-type': 'text/plain' } } : { token, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

async function seed(http: HttpClient, token: string): Promise<{ controllerId: number; regionId: number }> {
  const role = async (parent: number, name: string, self = NONE) => (await ok(http, token, 'POST', `/v1/role?parentRoleId=${parent}`, { manages: FLAGS, role: { name, selfRights: self } })).role.id as number;
  const region = await role(1, 'North region', { ...NONE, deviceManagement: true });
  const ghent = await role(region, 'Site Ghent');
  const antwerp = await role(region, 'Site Antwerp');
  await role(1, 'Service partners');
  const bruges = await role(region, 'Site Bruges');
  await ok(http, token, 'PUT', `/v1/role/${ghent}/member?userEmail=installer.ghent%40example.com&password=installer-password-1`, {});
  await ok(http, token, 'PUT', `/v1/role/${region}/member?userEmail=operator%40example.com&password=operator-password-1`, {});
  const sites = [['Ghent', ghent], ['Antwerp', antwerp], ['Bruges', bruges]] as const;
  const kinds = [['powerMeter', 'Grid meter'], ['solarInverter', 'PV inverter'], ['battery', 'Home battery'], ['evCharger', 'EV charger'], ['heatPump', 'Heat pump']] as const;
  let controllerId = 0;
  for (const [site, roleId] of sites) {
    const c = await ok(http, token, 'POST', `/v1/device?roleId=${roleId}`, { properties: {
      nodeType: 'smartgridController', nodeId: `ctrl-${site.toLowerCase()}-1`, name: `${site} site controller`, isActive: true, timezone: 'Europe/Brussels',
      gridConnectionMaxPowerW: 17000, softwareVersion: '3.2.0', info: { manufacturer: 'Eniris', model: 'SmartgridOne', serialNumber: `SG1-${site.toUpperCase()}-0042` },
      nodeInfluxSeries: [{ measurement: 'power', database: 'site', retentionPolicy: 'autogen', fields: ['gridW', 'solarW', 'batteryW'] }],
    } });
    if (site === 'Ghent') controllerId = c.device.id;
    for (let i = 0; i < 14; i++) {
      const [nodeType, label] = kinds[i % kinds.length];
      await ok(http, token, 'POST', `/v1/device?roleId=${roleId}`, { properties: {
        nodeType, nodeId: `${site.toLowerCase()}-${nodeType}-${i + 1}`, name: `${label} ${Math.floor(i / kinds.length) + 1} · ${site}`,
        isActive: i % 6 !== 5, info: { manufacturer: ['SMA', 'Victron', 'Alfen', 'Huawei', 'Daikin'][i % 5], model: `M${100 + i}` },
      } });
    }
  }
  const now = Date.now();
  const lines: string[] = [];
  for (let i = 0; i < 360; i++) {
    const t = now - (360 - i) * 10_000;
    const solar = Math.max(0, 5200 * Math.sin(i / 115) + 300 * Math.sin(i / 7));
    const battery = 1800 * Math.sin(i / 40);
    lines.push(`power,nodeId=ctrl-ghent-1 gridW=${(2400 - solar + battery + 400 * Math.sin(i / 5)).toFixed(1)},solarW=${solar.toFixed(1)},batteryW=${battery.toFixed(1)} ${t}`);
  }
  await ok(http, token, 'POST', '/v1/telemetry?db=site&rp=autogen&precision=ms', undefined, lines.join('\n'));
  const created = await ok(http, token, 'POST', '/v1/license', { type: 'residential', duration: 365, solarKw: 10, batteryKw: 8, count: 2 });
  await ok(http, token, 'POST', '/v1/license/claim', { licenseKey: created.licenses[0].key, nodeId: 'ctrl-ghent-1' });
  await ok(http, token, 'POST', '/v1/license/activate', { key: created.licenses[0].key });
  return { controllerId, regionId: region };
}

const { dir, exe } = isolatedBinary();
const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD });
const http = httpClient(run.url);
const browser = await launchChromium();
try {
  const refresh = await http.request('POST', '/auth/login', { body: { username: ADMIN, password: PASSWORD } });
  const token = (await http.request('GET', '/auth/accesstoken', { token: refresh.text })).text;
  const { controllerId, regionId } = await seed(http, token);
  mkdirSync(OUT, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
  const shot = async (name: string, fullPage = false) => {
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage });
    console.log(`docs/console/${name}.png`);
  };
  await page.goto(`${run.url}/console/`);
  await page.getByLabel('E-mail').fill(ADMIN);
  await shot('sign-in');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
  await page.getByRole('cell', { name: 'ctrl-ghent-1' }).waitFor();
  await shot('devices');

  await page.getByRole('link', { name: 'Roles' }).click();
  await page.getByRole('link', { name: 'North region' }).first().click();
  await page.getByRole('heading', { name: 'Role North region' }).waitFor();
  await page.getByRole('button', { name: 'Remove operator@example.com' }).waitFor();
  await page.getByRole('button', { name: 'Explain' }).click();
  await page.locator('.explain').waitFor();
  await shot('roles', true);
  void regionId;

  await page.goto(`${run.url}/console/devices/${controllerId}`);
  await page.getByRole('heading', { name: 'Ghent site controller' }).waitFor();
  await page.getByRole('button', { name: 'Plot' }).click();
  await page.locator('figure.plot canvas').waitFor();
  await page.getByLabel('name', { exact: true }).fill('Ghent site controller (main)');
  await shot('device', true);

  await page.getByRole('link', { name: 'Licenses' }).click();
  await page.getByRole('button', { name: 'Show licenses' }).first().click();
  await page.getByRole('cell', { name: /GK-/ }).first().waitFor();
  await shot('licenses', true);

  await page.getByRole('link', { name: 'Operations' }).click();
  await page.getByText('Per minute').waitFor();
  await page.waitForTimeout(5500); // a second sample of /metrics gives the rates
  await shot('operations', true);

  await page.getByRole('link', { name: 'Profile' }).click();
  await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
  await page.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
  await shot('profile-2fa');
} finally {
  await browser.close();
  http.close();
  await run.stop();
  rmSync(dir, { recursive: true, force: true });
}
