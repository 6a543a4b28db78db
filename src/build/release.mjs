// `npm run build:release`: the executables for linux-x64 and linux-arm64 and their Debian packages in dist/release/,
// with SHA256SUMS. build.mjs has made the bundle and this machine's executable first.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { makeExecutable } from './sea.mjs';
import { buildDeb } from '../packaging/deb.mjs';
import { CACHE, TARGETS, emulator, requireTools, sha256File, targetAddon, targetAllocator, targetNode } from './targets.mjs';

/**
 * The executable of `name` made from `bundle`: for this machine, `hostExe` as build.mjs made it; for another
 * architecture, made once per bundle, node and addon and kept in the cache.
 * @returns {{ exe: string, addon: string }}
 */
export function targetExecutable(name, { bundle, hostExe }) {
  const target = TARGETS[name];
  const addon = targetAddon(name);
  if (target.host) return { exe: hostExe, addon };
  requireTools(name);
  const { node } = targetNode(name);
  const allocator = targetAllocator(name);
  const key = sha256File(bundle).slice(0, 16) + sha256File(addon).slice(0, 8) + sha256File(allocator).slice(0, 8) + sha256File(node).slice(0, 8);
  const exe = join(CACHE, `gridkeeper-${name}-${key}`);
  if (!existsSync(exe)) {
    mkdirSync(CACHE, { recursive: true });
    makeExecutable({ bundle, addon, allocator, node, out: `${exe}.tmp`, runNode: [...emulator(name), node], strip: `${target.triplet}-strip` });
    renameSync(`${exe}.tmp`, exe);
  }
  return { exe, addon };
}

/** Builds everything into `<dist>/release` and returns the file names with their sizes. */
export function buildRelease({ dist, version, say = console.log }) {
  const out = join(dist, 'release');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const bundle = join(dist, 'gridkeeper.cjs');
  for (const name of Object.keys(TARGETS)) {
    const { exe, addon } = targetExecutable(name, { bundle, hostExe: join(dist, 'gridkeeper') });
    copyFileSync(exe, join(out, `gridkeeper-${version}-${name}`));
    say(`executable for ${name}`);
    buildDeb({ exe, addon, arch: TARGETS[name].deb, version, outDir: out });
    say(`Debian package for ${TARGETS[name].deb}`);
  }
  writeFileSync(join(out, 'SHA256SUMS'), readdirSync(out).sort().map((f) => `${sha256File(join(out, f))}  ${f}\n`).join(''));
  return readdirSync(out).sort().map((f) => ({ file: basename(f), bytes: statSync(join(out, f)).size }));
}

/** The version of the release: package.json's. */
export function packageVersion(root) {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
}
