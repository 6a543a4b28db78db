// Loads the native addons when running bundled: better-sqlite3's, and the allocator's (src/boot/allocator.c). Inside a
// single executable (SEA) `require` only reaches built-in modules, so each addon is embedded as an SEA asset, written
// once to a private directory (content hash in the name, atomic rename) and loaded with process.dlopen. Bundled but not
// a SEA (node dist/gridkeeper.cjs), the addons sit beside the bundle. From source (development, tests) better-sqlite3
// finds its own build (undefined is returned), and the allocator's is the build's, in dist/, when there is one.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Config } from '../lib/config.ts';

declare const __GRIDKEEPER_BUNDLED__: boolean | undefined;

export const ADDON_ASSET = 'better_sqlite3.node';
export const ALLOCATOR_ASSET = 'gridkeeper_allocator.node';

/** Where a single executable writes its addons: GRIDKEEPER_NATIVE_DIR, else the data dir's .native. */
export function nativeDir(config: Pick<Config, 'dataDir' | 'nativeDir'>): string {
  return config.nativeDir ?? join(config.dataDir, '.native');
}

export function isBundled(): boolean {
  return typeof __GRIDKEEPER_BUNDLED__ !== 'undefined' && __GRIDKEEPER_BUNDLED__;
}

function isSea(): boolean {
  try {
    return (require('node:sea') as { isSea(): boolean }).isSea();
  } catch {
    return false;
  }
}

function dlopen(file: string): unknown {
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
}

/** The loaded addon to pass as better-sqlite3's nativeBinding, or undefined when better-sqlite3 can find it itself. */
export function loadNativeBinding(extractDir: string): unknown {
  const file = bundledAddonFile(extractDir);
  return file === undefined ? undefined : dlopen(file);
}

/**
 * The addon's file, for a connection opened in a worker thread (which loads it with process.dlopen, see
 * src/telemetry/fold-worker.ts): the bundled one (extracted from the executable first), or from source better-sqlite3's
 * own build in the working directory's node_modules; undefined when there is none.
 */
export function addonFile(extractDir: string): string | undefined {
  if (isBundled()) return bundledAddonFile(extractDir);
  try {
    return createRequire(join(process.cwd(), 'index.js')).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined;
  }
}

/** The allocator addon's file (src/boot/allocator.ts): bundled, extracted first; from source, the build's in dist/. */
export function allocatorAddonFile(extractDir: string): string | undefined {
  if (isBundled()) return bundledAddonFile(extractDir, ALLOCATOR_ASSET);
  const built = join(process.cwd(), 'dist', ALLOCATOR_ASSET);
  return sizeOf(built) > 0 ? built : undefined;
}

/** Loads an addon file (process.dlopen): its exports. */
export function loadAddon(file: string): unknown {
  return dlopen(file);
}

function bundledAddonFile(extractDir: string, asset = ADDON_ASSET): string | undefined {
  if (!isBundled()) return undefined;
  if (!isSea()) return join(dirname(process.argv[1] ?? __filename), asset);
  const sea = require('node:sea') as { getRawAsset(name: string): ArrayBuffer };
  const bytes = Buffer.from(sea.getRawAsset(asset));
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const target = join(extractDir, `${asset.replace(/\.node$/, '')}-${hash}.node`);
  // The name carries the content hash; a file of the wrong size (a power cut during an earlier extraction) is rewritten.
  if (sizeOf(target) !== bytes.length) {
    mkdirSync(extractDir, { recursive: true, mode: 0o700 });
    const tmp = `${target}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o755);
    try {
      writeSync(fd, bytes);
      fsyncSync(fd); // on disk before the rename makes it visible
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target); // atomic: a concurrent start never loads a half-written file
  }
  return target;
}
