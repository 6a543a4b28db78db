// A throw-away Debian root to install packages into: a minimal system with systemd, made once by debootstrap (kept in
// the user's cache, src/build/targets.mjs's TOOLS_CACHE, under this machine's release and mirror), and for each use an
// overlay on it whose changes vanish at the end. Needs root (mount, chroot), as dpkg does.
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOLS_CACHE } from '../../src/build/targets.mjs';

/** This machine's Debian release and the mirror its apt uses for it. */
function release(): { suite: string; mirror: string } {
  const suite = /^VERSION_CODENAME=(\w+)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
  if (!suite) throw new Error('/etc/os-release names no VERSION_CODENAME: not a Debian release');
  const sources = ['/etc/apt/sources.list', ...(existsSync('/etc/apt/sources.list.d')
    ? readdirSync('/etc/apt/sources.list.d').map((f) => join('/etc/apt/sources.list.d', f)) : [])]
    .filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8')).join('\n');
  // deb822 stanzas (URIs: / Suites:) or one-line entries (deb URI suite components)
  const stanza = sources.split(/\n\s*\n/).find((s) => new RegExp(`^Suites:.*\\b${suite}\\b`, 'm').test(s) && /^URIs:/m.test(s));
  const mirror = stanza ? /^URIs:\s*(\S+)/m.exec(stanza)?.[1]
    : new RegExp(`^deb\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+)\\s+${suite}\\s`, 'm').exec(sources)?.[1];
  if (!mirror) throw new Error(`no apt source for ${suite} found in /etc/apt`);
  return { suite, mirror };
}

/** The pristine minimal system, made on first use (~40 s). */
function baseRoot(): string {
  const { suite, mirror } = release();
  const dir = join(TOOLS_CACHE, `debootstrap-${suite}-minbase-systemd-${createHash('sha256').update(mirror).digest('hex').slice(0, 8)}`);
  if (existsSync(dir)) return dir;
  mkdirSync(TOOLS_CACHE, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  try {
    execFileSync('debootstrap', ['--variant=minbase', '--include=systemd', suite, tmp, mirror], { stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

export interface DebianRoot {
  /** the root's directory, seen from here */
  dir: string;
  /** runs a command inside the root (chroot) and returns its standard output */
  run(args: string[], options?: ExecFileSyncOptions): string;
  /** unmounts and deletes everything */
  remove(): void;
}

export function debianRoot(): DebianRoot {
  const base = baseRoot();
  const work = mkdtempSync(join(tmpdir(), 'gk-debroot-'));
  const dir = join(work, 'root');
  for (const d of ['upper', 'work', 'root']) mkdirSync(join(work, d));
  const mounts: string[] = [];
  const mount = (args: string[], target: string) => {
    execFileSync('mount', [...args, target]);
    mounts.unshift(target);
  };
  const remove = () => {
    for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
    rmSync(work, { recursive: true, force: true });
  };
  try {
    mount(['-t', 'overlay', 'overlay', '-o', `lowerdir=${base},upperdir=${join(work, 'upper')},workdir=${join(work, 'work')}`], dir);
    mount(['-t', 'proc', 'proc'], join(dir, 'proc'));
  } catch (err) {
    remove();
    throw err;
  }
  return {
    dir,
    run: (args, options = {}) => String(execFileSync('chroot', [dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options })),
    remove,
  };
}
