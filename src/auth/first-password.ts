// The generated first admin password, for a service with no terminal (GRIDKEEPER_ADMIN_PASSWORD_FILE): written to a
// file that only its owner (the service's user) and root can read, never to stderr, which a service manager keeps in
// its journal. The file is removed when the admin first logs in: from then on the password lives in one head only.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../lib/config.ts';

/**
 * Writes the password, durably, before the admin is committed (bootstrap's announcePassword): a start that dies in
 * between leaves a file whose password was never stored, and the next start replaces it.
 */
export function writePasswordFile(file: string, password: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  // 0600 at creation: no moment at which another user could open it
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${password}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** After a successful password login: the first admin's password file, if any, is not needed anymore. */
export function forgetPasswordFile(config: Pick<Config, 'adminEmail' | 'adminPasswordFile'>, email: string): void {
  if (config.adminPasswordFile !== undefined && email.toLowerCase() === config.adminEmail) rmSync(config.adminPasswordFile, { force: true });
}
