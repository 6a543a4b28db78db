// First start on an empty database: the root role (id 1, all six selfRights), the admin user as its member, and the
// signing keys. Idempotent: a database that already has a root role is left alone.
import type { Db } from '../db/open.ts';
import { transactionLock } from '../db/operations.ts';
import { ROOT_ROLE_ID } from '../access/root.ts';
import { insertRootRole, roleExists } from '../roles/roles.store.ts';
import { upsertMember } from '../roles/members.store.ts';
import { ensureSigningKey } from '../auth/keys.ts';
import { generatePassword, hashSecret } from '../auth/passwords.ts';
import { findUserByEmail, insertUser } from '../auth/users.store.ts';

/** pg_advisory_xact_lock key of the first-start bootstrap ('gk' 'boot') */
const BOOTSTRAP_LOCK = 0x676b626f6f74;

export interface BootstrapResult {
  created: boolean;
  adminEmail: string;
  /** set only when the password was generated here; shown once, never stored in clear */
  generatedPassword?: string;
}

export interface BootstrapOptions {
  adminEmail: string;
  adminPassword?: string;
  now: number;
  /**
   * Shows a generated password. Called BEFORE the admin is committed: if the process dies in between, nothing was
   * stored and the next start generates and shows a new one — the password can never be stored yet unseen.
   */
  announcePassword?: (email: string, password: string) => void;
}

/**
 * One transaction. On PostgreSQL several nodes may start at the same moment: the first takes the bootstrap lock and
 * creates the keys, root role and admin; the others wait for it, then find them (READ COMMITTED: each statement after
 * the lock sees what the first committed). On SQLite the transaction holds the one connection.
 */
export async function bootstrap(db: Db, opts: BootstrapOptions): Promise<BootstrapResult> {
  return db.tx(async (tx) => {
    await transactionLock(tx, BOOTSTRAP_LOCK);
    return bootstrapIn(tx, opts);
  });
}

async function bootstrapIn(tx: Db, opts: BootstrapOptions): Promise<BootstrapResult> {
  await ensureSigningKey(tx, opts.now);
  if (await roleExists(tx, ROOT_ROLE_ID)) return { created: false, adminEmail: opts.adminEmail };
  const password = opts.adminPassword ?? generatePassword();
  const hash = await hashSecret(password);
  if (!opts.adminPassword) opts.announcePassword?.(opts.adminEmail, password);
  await insertRootRole(tx, opts.now);
  // a user with the admin's e-mail may exist already (created before the root role): it becomes the root member
  const userId = await insertUser(tx, opts.adminEmail, hash, opts.now) ?? (await findUserByEmail(tx, opts.adminEmail))!.id;
  await upsertMember(tx, ROOT_ROLE_ID, userId);
  return { created: true, adminEmail: opts.adminEmail, ...(opts.adminPassword ? {} : { generatedPassword: password }) };
}
