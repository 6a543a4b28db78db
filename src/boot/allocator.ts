// glibc's allocator, set by the service itself (src/boot/allocator.c, an addon embedded like better-sqlite3's).
//
// Node's threads each allocate from an arena of their own (glibc makes up to eight per core), and every arena keeps
// its high-water mark, mostly free, after the work that filled it (a fold worker's slice of staged points, a read
// worker's raw week). glibc also raises its mmap threshold to the largest block freed so far, up to 32 MB, so that
// later buffers of a few hundred kB (request bodies, PostgreSQL's messages) come from the heap, where they fragment it
// instead of being given back when freed. The settings below are those of MALLOC_ARENA_MAX=2,
// MALLOC_MMAP_THRESHOLD_=131072 and MALLOC_TRIM_THRESHOLD_=2097152, which glibc reads from the environment only when
// the process starts: set here before any worker thread, a bare executable behaves as the Debian unit's service does
// (bench/README.md has the measurements). A setting given in the environment, or in GLIBC_TUNABLES, wins. The trim
// threshold is 2 MB, not glibc's first 128 kB: a heap's top given back after every request is taken again by the next
// one, page by page; the trim after work below gives it back once the work is done.
//
// glibc gives back only the top of a heap by itself; the free pages below it stay resident. Once the process goes idle
// after work, or heavy work gives way to lighter work, trimAllocatorAfterWork gives them back (malloc_trim).
import { allocatorAddonFile, loadAddon, nativeDir } from '../db/native.ts';
import { parseConfig } from '../lib/config.ts';
import { collectAfterWork } from '../lib/worker-heap.ts';

interface AllocatorAddon {
  set(option: string, value: number): boolean;
  trim(): boolean;
}

/** Each setting: the addon's name for it, the environment variable and the tunable that set it at start, its value. */
const ALLOCATOR_SETTINGS = [
  { option: 'arenaMax', env: 'MALLOC_ARENA_MAX', tunable: 'glibc.malloc.arena_max', value: 2 },
  { option: 'mmapThreshold', env: 'MALLOC_MMAP_THRESHOLD_', tunable: 'glibc.malloc.mmap_threshold', value: 131_072 },
  { option: 'trimThreshold', env: 'MALLOC_TRIM_THRESHOLD_', tunable: 'glibc.malloc.trim_threshold', value: 2_097_152 },
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
/** A check interval with this much CPU or more is heavy work (a bulk load, a burst of raw reads)... */
const HEAVY_CPU_MS = 500;
/** ...and it has ended when an interval uses this fraction of the busiest one since, or less. */
const DROP_FRACTION = 0.25;

/** What the trimmer knows between two check intervals. */
export interface TrimState {
  /** an interval since the last trim used IDLE_CPU_MS or more */
  worked: boolean;
  /** the most CPU an interval used since the last trim (ms) */
  busiest: number;
}

export const NO_WORK: TrimState = { worked: false, busiest: 0 };

/**
 * One check interval that used `usedMs` of CPU: whether to trim now, and the state after. A trim follows work, once:
 * when the process goes idle (an interval under IDLE_CPU_MS: 'idle'), or when heavy work has given way to lighter work
 * (an interval of DROP_FRACTION of the busiest one or less: 'drop') — requests that go on after a bulk load would
 * otherwise keep the load's garbage and free pages resident, under the peaks of what they do next.
 */
export function trimStep(state: TrimState, usedMs: number): { trim: 'idle' | 'drop' | undefined; state: TrimState } {
  if (usedMs < IDLE_CPU_MS) return { trim: state.worked ? 'idle' : undefined, state: NO_WORK };
  if (state.busiest >= HEAVY_CPU_MS && usedMs <= state.busiest * DROP_FRACTION) return { trim: 'drop', state: { worked: true, busiest: usedMs } };
  return { trim: undefined, state: { worked: true, busiest: Math.max(state.busiest, usedMs) } };
}

/**
 * Gives the free pages of every arena back to the system (malloc_trim) after work (trimStep), the main thread's heap
 * collected first when heavy work gave way to lighter work: an arena keeps the pages its thread's busiest moment
 * needed (a fold worker's slice of staged points, a read worker's raw week), free but resident, and glibc only gives
 * back the top of a heap by itself. `trimmed` hears of each trim (what it followed, its time, and the process's RSS
 * before and after). Returns the stop function.
 */
export function trimAllocatorAfterWork(trimmed: (t: { after: 'idle' | 'drop'; ms: number; rssBefore: number; rssAfter: number }) => void): () => void {
  const allocator = addon;
  if (allocator === undefined) return () => {};
  let cpu = process.cpuUsage();
  let state = NO_WORK;
  const timer = setInterval(() => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const step = trimStep(state, (used.user + used.system) / 1000);
    state = step.state;
    if (step.trim === undefined) return;
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    // busy still, V8 would keep the load's garbage in a grown old generation until its next full collection; idle,
    // it shrinks the heap by itself
    if (step.trim === 'drop') collectAfterWork();
    allocator.trim();
    trimmed({ after: step.trim, ms: performance.now() - started, rssBefore, rssAfter: process.memoryUsage.rss() });
    cpu = process.cpuUsage(); // the trim's own time is not the next interval's work
  }, IDLE_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
