// Process settings of the serve command (src/boot/tuning.ts): the young generation stops growing once the main
// thread's has reached its bound, unless node's command line sets a semi-space flag. Each case in a node of its own
// (V8's flags are the process's), allocating objects that survive scavenges, a turn of the event loop at a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const tuning = fileURLToPath(new URL('../../src/boot/tuning.ts', import.meta.url));
const register = fileURLToPath(new URL('../support/register.mjs', import.meta.url));
const MB = 1024 * 1024;

/** The young generation's size (both semi-spaces) after a load that grows it to V8's full size when nothing stops it. */
function youngAfterLoad(nodeFlags: string[]): number {
  const script = `
    import { tuneHeapGrowth } from ${JSON.stringify(tuning)};
    import { getHeapSpaceStatistics } from 'node:v8';
    tuneHeapGrowth();
    let keep = [];
    let turns = 0;
    const turn = () => {
      for (let i = 0; i < 20000; i++) {
        keep.push({ i, s: 'x' + i });
        if (keep.length > 300000) keep = keep.slice(150000);
      }
      if (++turns < 300) setImmediate(turn);
      else console.log(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    };
    turn();`;
  const r = spawnSync(process.execPath, [...nodeFlags, '--import', register, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim());
}

test('tuning: the young generation stops growing at 8 MB; a semi-space flag on the command line wins', () => {
  const bounded = youngAfterLoad([]);
  assert.ok(bounded >= 8 * MB && bounded <= 16 * MB, `young generation ${bounded / MB} MB, bounded at 8 (one growth may pass before it is seen)`);
  const given = youngAfterLoad(['--max-semi-space-size=16']);
  assert.equal(given, 32 * MB, 'grown to the two 16 MB semi-spaces the command line allows');
});
