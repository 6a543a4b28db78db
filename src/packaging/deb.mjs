// The Debian package gridkeeper_<version>_<arch>.deb, built with dpkg-deb from the files beside this one: the
// executable in /usr/bin, the systemd unit, the settings as a conffile (root's alone: it may hold secrets), the
// maintainer scripts, and the documents lintian asks for.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(dirname(here));

/** libstdc++'s symbol version GLIBCXX_3.4.N first came with GCC (the Debian package's version) ... */
const GLIBCXX_GCC = { 21: '5', 22: '6', 23: '7', 24: '7', 25: '8', 26: '9', 27: '9', 28: '10', 29: '11', 30: '12', 31: '13', 32: '14', 33: '15' };

const newest = (versions) => versions.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1);

/**
 * The shared libraries the ELF files need, as Depends: each library at the newest symbol version asked for (what
 * dpkg-shlibdeps would say for these three; libdl, libm and libpthread are libc6's).
 */
export function libraryDepends(files) {
  const names = files.flatMap((f) => [...execFileSync('readelf', ['-V', '--wide', f], { encoding: 'utf8', maxBuffer: 1 << 26 })
    .matchAll(/Name: ((?:GLIBC|GLIBCXX|GCC)_[\d.]+)/g)].map((m) => m[1]));
  const of = (prefix) => newest(names.filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length)));
  const glibc = of('GLIBC_');
  const glibcxx = of('GLIBCXX_');
  const gcc = of('GCC_');
  const cxxMinor = glibcxx ? Number(glibcxx.split('.')[2] ?? 0) : 0;
  if (cxxMinor > 33) throw new Error(`GLIBCXX_${glibcxx}: add its GCC version to GLIBCXX_GCC in src/packaging/deb.mjs`);
  return [
    glibc && `libc6 (>= ${glibc})`,
    gcc && `libgcc-s1 (>= ${gcc.split('.').slice(0, 2).join('.')})`,
    glibcxx && (GLIBCXX_GCC[cxxMinor] ? `libstdc++6 (>= ${GLIBCXX_GCC[cxxMinor]})` : 'libstdc++6'),
  ].filter(Boolean).join(', ');
}

/** A Debian changelog entry: a native package must carry one (gzip -9n, no timestamp in the header). */
function changelog(version, date) {
  const text = `gridkeeper (${version}) stable; urgency=medium\n\n  * Release ${version}: see /usr/share/doc/gridkeeper/README.md.\n\n`
    + ` -- gridkeeper maintainers <maintainers@gridkeeper.example>  ${date}\n`;
  return gzipSync(text, { level: 9 });
}

/**
 * Writes `<outDir>/gridkeeper_<version>_<arch>.deb` and returns its path.
 * @param {{ exe: string, addon: string, arch: string, version: string, outDir: string, compression?: 'xz' | 'gzip', level?: number, date?: Date }} opts
 *   exe: the executable; addon: the better-sqlite3 addon embedded in it (its libraries count for Depends);
 *   compression, level: xz at dpkg-deb's level for releases; gzip -1 where only the contents matter (tests: ~4 s
 *   instead of ~75 s of CPU for xz).
 */
export function buildDeb({ exe, addon, arch, version, outDir, compression = 'xz', level, date = new Date() }) {
  mkdirSync(outDir, { recursive: true });
  const stage = mkdtempSync(join(outDir, '.deb-'));
  chmodSync(stage, 0o755);
  try {
    const put = (rel, from, mode, text) => {
      const to = join(stage, rel);
      mkdirSync(dirname(to), { recursive: true, mode: 0o755 });
      if (text !== undefined) writeFileSync(to, text);
      else copyFileSync(from, to);
      chmodSync(to, mode);
    };
    put('usr/bin/gridkeeper', exe, 0o755);
    put('lib/systemd/system/gridkeeper.service', join(here, 'gridkeeper.service'), 0o644);
    put('etc/gridkeeper/gridkeeper.env', join(here, 'gridkeeper.env'), 0o600);
    put('usr/share/doc/gridkeeper/copyright', join(here, 'copyright'), 0o644);
    put('usr/share/doc/gridkeeper/README.md', join(root, 'README.md'), 0o644);
    put('usr/share/doc/gridkeeper/operations.md', join(root, 'docs/operations.md'), 0o644);
    put('usr/share/doc/gridkeeper/changelog.gz', undefined, 0o644, changelog(version, date.toUTCString().replace('GMT', '+0000')));
    put('usr/share/lintian/overrides/gridkeeper', join(here, 'lintian-overrides'), 0o644);
    for (const script of ['postinst', 'prerm', 'postrm']) put(`DEBIAN/${script}`, join(here, script), 0o755);
    put('DEBIAN/conffiles', undefined, 0o644, '/etc/gridkeeper/gridkeeper.env\n');
    // dpkg --verify checks the installed files against these (conffiles have their own sums in dpkg's status)
    const files = execFileSync('find', ['usr', 'lib', '-type', 'f'], { cwd: stage, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
    put('DEBIAN/md5sums', undefined, 0o644, files.map((f) => `${createHash('md5').update(readFileSync(join(stage, f))).digest('hex')}  ${f}\n`).join(''));
    const installedKiB = Math.ceil(Number(execFileSync('du', ['-s', '--block-size=1024', '--exclude=DEBIAN', stage], { encoding: 'utf8' }).split('\t')[0]));
    const control = readFileSync(join(here, 'control'), 'utf8')
      .replace('@VERSION@', version)
      .replace('@ARCH@', arch)
      .replace('@INSTALLED_SIZE@', String(installedKiB))
      .replace('@LIBRARIES@', libraryDepends([exe, addon]));
    put('DEBIAN/control', undefined, 0o644, control);
    const out = join(outDir, `gridkeeper_${version}_${arch}.deb`);
    execFileSync('dpkg-deb', ['--root-owner-group', `-Z${compression}`, ...(level === undefined ? [] : [`-z${level}`]), '--build', stage, out],
      { stdio: ['ignore', 'ignore', 'inherit'] });
    statSync(out);
    return out;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
