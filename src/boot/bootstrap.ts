// First start on an empty database: the root role (id 1, all six selfRights), the admin user as its member, and the
// signing keys. Idempotent: a database that already has a root role is left alone.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { ROOT_ROLE_ID } from '../access/root.ts';
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
    if (tx.backend === 'postgres') await tx.get(sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK}) AS locked`);
    return bootstrapIn(tx, opts);
  });
}

async function bootstrapIn(tx: Db, opts: BootstrapOptions): Promise<BootstrapResult> {
  await ensureSigningKey(tx, opts.now);
  const root = await tx.get(tx.qb.selectFrom('roles').select('id').where('id', '=', ROOT_ROLE_ID));
  if (root) return { created: false, adminEmail: opts.adminEmail };
  const password = opts.adminPassword ?? generatePassword();
  const hash = await hashSecret(password);
  if (!opts.adminPassword) opts.announcePassword?.(opts.adminEmail, password);
  await tx.run(tx.qb.insertInto('roles').values({
    id: ROOT_ROLE_ID, name: 'root',
    self_role_management: 1, self_user_management: 1, self_view_management: 1,
    self_device_management: 1, self_report_management: 1, self_alarm_management: 1,
    password_hash: null, created_at: opts.now,
  }));
  // a user with the admin's e-mail may exist already (created before the root role): it becomes the root member
  const userId = await insertUser(tx, opts.adminEmail, hash, opts.now) ?? (await findUserByEmail(tx, opts.adminEmail))!.id;
  await tx.run(tx.qb.insertInto('members').values({ role_id: ROOT_ROLE_ID, user_id: userId }).onConflict((oc) => oc.doNothing()));
  return { created: true, adminEmail: opts.adminEmail, ...(opts.adminPassword ? {} : { generatedPassword: password }) };
}
