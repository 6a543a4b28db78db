// The console's device table at 10,000 devices, in headless Chromium against dist/gridkeeper (issue 15: "renders
// 10,000 rows without freezing"). Prints: the index query's size, time to the first page on screen, time for a
// search keystroke and a sort to show, and the longest main-thread task (PerformanceObserver 'longtask').
// Run: npm run build && node --import ./test/support/register.mjs bench/console-devices.ts   (DEVICES=10000, a multiple of 10)
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedBinary, startBinary } from '../test/support/binary.ts';
import { launchChromium } from '../test/support/chromium.ts';
import { httpClient } from '../test/support/http-client.ts';

const DEVICES = Number(process.env.DEVICES ?? 10_000);
const PASSWORD = 'bench-console-password';
const TYPES = ['powerMeter', 'solarInverter', 'battery', 'evCharger', 'heatPump', 'smartgridController'];

const { dir, exe } = isolatedBinary();
const run = await startBinary(exe, ['--data-dir', join(dir, 'data')], { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD });
const http = httpClient(run.url, { keepAlive: true, maxSockets: 8 });
const browser = await launchChromium();
try {
  const refresh = (await http.request('POST', '/auth/login', { body: { username: 'admin@localhost', password: PASSWORD } })).text;
  const token = (await http.request('GET', '/auth/accesstoken', { token: refresh })).text;
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < DEVICES) {
      const i = next++;
      const res = await http.request('POST', '/v1/device?roleId=1', { token, body: { properties: {
        nodeType: TYPES[i % TYPES.length], nodeId: `node-${i}`, name: `Device ${String(i).padStart(5, '0')}`, isActive: i % 7 !== 0,
      } } });
      if (res.status !== 200) throw new Error(`create ${i}: ${res.status} ${res.text}`);
    }
  }));
  console.log(`created ${DEVICES} devices through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
  await page.addInitScript(() => {
    const w = window as unknown as { longest: number };
    w.longest = 0;
    new PerformanceObserver((list) => { for (const e of list.getEntries()) w.longest = Math.max(w.longest, e.duration); }).observe({ type: 'longtask', buffered: true });
  });
  let indexBytes = 0;
  page.on('response', async (r) => { if (r.url().endsWith('/v1/device/query')) indexBytes = (await r.body()).length; });
  await page.goto(`${run.url}/console/`);
  await page.getByLabel('E-mail').fill('admin@localhost');
  await page.getByLabel('Password').fill(PASSWORD);
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(`1–50 of ${DEVICES.toLocaleString('en-US')} devices`).waitFor({ timeout: 60_000 });
  const firstPage = Date.now() - t0;

  // a name prefix shared by the last ten devices ("Device 0999" at 10,000): ten matches at any multiple of 10
  const prefix = `Device ${String(Math.floor((DEVICES - 1) / 10)).padStart(4, '0')}`;
  const t1 = Date.now();
  await page.getByLabel('Search').fill(prefix);
  await page.getByText(/of 10 devices/).waitFor();
  const search = Date.now() - t1;
  await page.getByLabel('Search').fill('');

  const t2 = Date.now();
  await page.getByRole('button', { name: 'Name' }).click();
  await page.getByRole('button', { name: 'Name' }).click(); // descending: the last device comes first
  await page.getByRole('cell', { name: `Device ${String(DEVICES - 1).padStart(5, '0')}` }).waitFor();
  const sort = Date.now() - t2;

  const t3 = Date.now();
  await page.getByRole('button', { name: 'Last', exact: true }).click();
  await page.getByText(`of ${DEVICES.toLocaleString('en-US')} devices`).waitFor();
  const last = Date.now() - t3;
  const longest = await page.evaluate(() => (window as unknown as { longest: number }).longest);

  console.log(`index query body: ${(indexBytes / 1024).toFixed(0)} KiB for ${DEVICES} devices (four properties each)`);
  console.log(`sign-in click -> first page of the table on screen: ${firstPage} ms`);
  console.log(`search "${prefix}" -> 10 matches shown: ${search} ms`);
  console.log(`sort by name twice (descending) -> shown: ${sort} ms`);
  console.log(`jump to the last page: ${last} ms`);
  console.log(`longest main-thread task during the whole run: ${longest.toFixed(0)} ms`);
} finally {
  await browser.close();
  http.close();
  await run.stop();
  rmSync(dir, { recursive: true, force: true });
}
