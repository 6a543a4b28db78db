// libuv's thread pool (scrypt password hashes, the commit's fdatasync, file reads) sized to the machine: at most 4 (libuv's
// default), at least 2, one per core in between. It must be set before the pool's first use, so main.ts imports this
// module first; a UV_THREADPOOL_SIZE in the environment wins.
// Why: every pool thread that hashes a password keeps that hash's 16 MiB of memory afterwards (glibc's per-thread
// arena holds on to it), so on a 2-core machine two more threads only cost memory: 32 MiB of RSS, with no gain in speed.
import { availableParallelism } from 'node:os';

process.env.UV_THREADPOOL_SIZE ??= String(Math.min(4, Math.max(2, availableParallelism())));
