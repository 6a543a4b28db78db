// The log's lines: one JSON object each; the lines of one event-loop turn reach stdout in one write, a warning or error
// at once after those before it (logger.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchedLines, createLogger } from '../../src/lib/logger.ts';
import { createApp } from '../../src/boot/app.ts';
import { makeTestApp } from '../support/app.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('the lines of one turn go out together, in order; a warning flushes at once', async () => {
  const writes: string[] = [];
  const lines = batchedLines((text) => writes.push(text));
  const log = createLogger('info', lines.write);
  log.info('first', { n: 1 });
  log.debug('below the level');
  log.info('second');
  assert.equal(writes.length, 0, 'nothing written within the turn');
  await turn();
  assert.equal(writes.length, 1, 'one write for the turn');
  assert.deepEqual(writes[0]!.trimEnd().split('\n').map((l) => JSON.parse(l).msg), ['first', 'second']);
  assert.equal(JSON.parse(writes[0]!.split('\n')[0]!).n, 1);
  log.info('third');
  log.warn('careful');
  assert.equal(writes.length, 2, 'the warning went out at once');
  assert.deepEqual(writes[1]!.trimEnd().split('\n').map((l) => JSON.parse(l).level), ['info', 'warn']);
  await turn();
  assert.equal(writes.length, 2, 'nothing left to write');
  log.info('fourth');
  lines.flush();
  assert.equal(writes.length, 3);
  assert.equal(JSON.parse(writes[2]!).msg, 'fourth');
});

test('a command\'s output comes after what it logged, and the lines of an exiting process are written', async () => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const logger = fileURLToPath(new URL('../../src/lib/logger.ts', import.meta.url));
  const register = fileURLToPath(new URL('../support/register.mjs', import.meta.url));
  const script = `
    import { createLogger, flushLogLines } from ${JSON.stringify(logger)};
    const log = createLogger('info');
    log.info('logged');
    flushLogLines();
    process.stdout.write('printed\\n');
    log.info('at exit');
    process.exit(0);`;
  const r = spawnSync(process.execPath, ['--import', register, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout.trimEnd().split('\n');
  assert.equal(out.length, 3, r.stdout);
  assert.equal(JSON.parse(out[0]!).msg, 'logged');
  assert.equal(out[1], 'printed');
  assert.equal(JSON.parse(out[2]!).msg, 'at exit');
});

test('a successful poll of /healthz or /metrics is logged at debug; other requests, and failed polls, at info', async (t) => {
  const testApp = await makeTestApp();
  t.after(() => testApp.close());
  const lines: { level: string; route: string; status: number }[] = [];
  const { app } = createApp({ ...testApp.deps, log: createLogger('debug', (line) => lines.push(JSON.parse(line))) });
  const get = async (path: string) => (await app.request(path, {}, { incoming: { socket: { remoteAddress: '127.0.0.1' } } })).status;
  assert.equal(await get('/healthz'), 200);
  assert.equal(await get('/metrics'), 200);
  assert.equal(await get('/v1/nothing'), 404);
  assert.equal(await get('/v1/device'), 401);
  assert.deepEqual(lines.filter((l) => (l as { msg?: string }).msg === 'request').map((l) => [l.level, l.route, l.status]), [
    ['debug', '/healthz', 200], ['debug', '/metrics', 200], ['info', 'unmatched', 404], ['info', '/v1/device', 401],
  ]);
});
