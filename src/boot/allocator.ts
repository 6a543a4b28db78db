// glibc's allocator, set by the service itself (src/boot/allocator.c, an addon embedded like better-sqlite3's).
//
// Node's threads each allocate from an arena of their own (glibc makes up to eight per core), and every arena keeps
// its high-water mark, mostly free, after the work that filled it (a fold worker's slice of staged points, a read
// worker's raw week). glibc also raises its mmap threshold to the largest block freed so far, up to 32 MB, so that
// later buffers of a few hundred kB (request bodies, PostgreSQL's messages) come from the heap, where they fragment it
// instead of being given back when freed. The settings below are those of MALLOC_ARENA_MAX=2,
// MALLOC_MMAP_THRESHOLD_=131072 and MALLOC_TRIM_THRESHOLD_=131072, which glibc reads from the environment only when
// the process starts: set here before any worker thread, a bare executable behaves as the Debian unit's service does
// (bench/README.md has the measurements). A setting given in the environment, or in GLIBC_TUNABLES, wins.
//
// glibc gives back only the top of a heap by itself; the free pages below it stay resident. Once the process goes idle
// after work, trimAllocatorWhenIdle gives them back (malloc_trim).
import { allocatorAddonFile, loadAddon, nativeDir } from '../db/native.ts';
import { parseConfig } from '../lib/config.ts';

interface AllocatorAddon {
  set(option: string, value: number): boolean;
  trim(): boolean;
}

/** Each setting: the addon's name for it, the environment variable and the tunable that set it at start, its value. */
const ALLOCATOR_SETTINGS = [
  { option: 'arenaMax', env: 'MALLOC_ARENA_MAX', tunable: 'glibc.malloc.arena_max', value: 2 },
  { option: 'mmapThreshold', env: 'MALLOC_MMAP_THRESHOLD_', tunable: 'glibc.malloc.mmap_threshold', value: 131_072 },
  { option: 'trimThreshold', env: 'MALLOC_TRIM_THRESHOLD_', tunable: 'glibc.malloc.trim_threshold', value: 131_072 },
] as const;

/** What tuneAllocator did: the settings made, those left to the environment, or why none could be made. */
export interface AllocatorTuning {
  set: Record<string, number>;
  fromEnvironment: string[];
  unavailable?: string;
}

let addon: AllocatorAddon | undefined;

/** Whether the command line runs the service: `serve`, or no command (help and version answer first). */
export function isServeCommand(argv: string[]): boolean {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help' || argv[0] === '--version') return false;
  return argv.length === 0 || argv[0] === 'serve' || argv[0].startsWith('-');
}

/**
 * For the service only (a command's process is short, and must not make a data dir for `version`): tuneAllocator with
 * the configured data dir. A configuration that does not parse is left to the command line to report.
 */
export function tuneAllocatorToServe(argv: string[], env: NodeJS.ProcessEnv): AllocatorTuning | undefined {
  if (!isServeCommand(argv)) return undefined;
  let dir: string;
  try {
    dir = nativeDir(parseConfig(env, argv[0] === 'serve' ? argv.slice(1) : argv).config);
  } catch {
    return undefined;
  }
  return tuneAllocator(dir, env);
}

/**
 * Loads the addon (`extractDir`: where a single executable writes it, db/native.ts) and makes every setting the
 * environment does not. Call once, first thing, before the process's threads allocate: glibc keeps the arenas
 * they took before the cap.
 */
function tuneAllocator(extractDir: string, env: NodeJS.ProcessEnv): AllocatorTuning {
  const tuning: AllocatorTuning = { set: {}, fromEnvironment: [] };
  try {
    const file = allocatorAddonFile(extractDir);
    if (file === undefined) return { ...tuning, unavailable: 'no allocator addon (run from source without a build)' };
    addon = loadAddon(file) as AllocatorAddon;
  } catch (err) {
    return { ...tuning, unavailable: `the allocator addon did not load: ${err instanceof Error ? err.message : String(err)}` };
  }
  const tunables = env.GLIBC_TUNABLES ?? '';
  for (const s of ALLOCATOR_SETTINGS) {
    if (env[s.env] !== undefined || tunables.includes(`${s.tunable}=`)) tuning.fromEnvironment.push(s.env);
    else if (addon.set(s.option, s.value)) tuning.set[s.env] = s.value;
  }
  if (Object.keys(tuning.set).length === 0 && tuning.fromEnvironment.length === 0) tuning.unavailable = 'not glibc';
  return tuning;
}

/** How often the process's CPU time is looked at, and below how much of it in that time the process is idle. */
const IDLE_CHECK_MS = 1000;
const IDLE_CPU_MS = 30;

/**
 * Gives the free pages of every arena back to the system (malloc_trim) once the process goes idle after work: an arena
 * keeps the pages its thread's busiest moment needed (a fold worker's slice of staged points, a read worker's raw
 * week), free but resident, and glibc only gives back the top of a heap by itself. Idle is a check interval in which
 * all threads together used less than IDLE_CPU_MS of CPU, after one that used more since the last trim. `trimmed` hears
 * of each trim (its time, and the process's RSS before and after). Returns the stop function.
 */
export function trimAllocatorWhenIdle(trimmed: (t: { ms: number; rssBefore: number; rssAfter: number }) => void): () => void {
  const allocator = addon;
  if (allocator === undefined) return () => {};
  let cpu = process.cpuUsage();
  let worked = false;
  const timer = setInterval(() => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    if ((used.user + used.system) / 1000 >= IDLE_CPU_MS) {
      worked = true;
      return;
    }
    if (!worked) return;
    worked = false;
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    allocator.trim();
    trimmed({ ms: performance.now() - started, rssBefore, rssAfter: process.memoryUsage.rss() });
    cpu = process.cpuUsage(); // the trim's own time is not the next interval's work
  }, IDLE_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
