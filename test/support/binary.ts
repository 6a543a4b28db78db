// Starts the built single executable (dist/gridkeeper) as a child process and talks HTTP to it.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BINARY = fileURLToPath(new URL('../../dist/gridkeeper', import.meta.url));

export interface RunningBinary {
  url: string;
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** SIGTERM and wait for the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Copies the executable alone into a fresh directory (no node_modules anywhere above it) and returns its path. */
export function isolatedBinary(): { dir: string; exe: string } {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run "node build.mjs" first (npm test does)`);
  const dir = mkdtempSync(join(tmpdir(), 'gk-bin-'));
  const exe = join(dir, 'gridkeeper');
  copyFileSync(BINARY, exe);
  return { dir, exe };
}

/** `timeoutMs`: how long it may take to print its listening line (an emulated executable starts slowly). */
export function startBinary(exe: string, args: string[], env: Record<string, string> = {}, cwd?: string, timeoutMs = 15_000): Promise<RunningBinary> {
  const child = spawn(exe, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GRIDKEEPER_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no listening line within ${timeoutMs / 1000} s: ${stderr.join('')}`)); }, timeoutMs);
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        stdout.push(line);
        try {
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg === 'listening' && parsed.url) {
            clearTimeout(timer);
            resolve({
              url: parsed.url, child, stdout, stderr,
              stop: (signal = 'SIGTERM') => { child.kill(signal); return exited; },
            });
          }
        } catch { /* not JSON: keep reading */ }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before listening: ${stderr.join('')}`)); });
  });
}
