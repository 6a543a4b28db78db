// Statements about the database itself rather than any domain's rows: a liveness ping, a transaction-level lock
// between processes, the file's size, a consistent copy of the file.
import { CompiledQuery, sql, type Compilable } from 'kysely';
import type { Db } from './open.ts';

/** The same text on both backends, compiled once. */
const PING_SQL = CompiledQuery.raw('SELECT 1 AS ok') as CompiledQuery<{ ok: number }>;
const PING: Compilable<{ ok: number }> = { compile: () => PING_SQL };

/** Resolves when the database answers a statement; rejects (DatabaseUnavailable on PostgreSQL) when it does not. */
export async function ping(db: Db): Promise<void> {
  await db.get(PING);
}

/**
 * Holds `key` until the transaction `tx` ends, so that processes starting at the same moment (several nodes on one
 * PostgreSQL database) take turns. SQLite needs none: its transaction holds the one connection already.
 */
export async function transactionLock(tx: Db, key: number): Promise<void> {
  if (tx.backend === 'postgres') await tx.get(sql`SELECT pg_advisory_xact_lock(${key}) AS locked`);
}

/** SQLite: a reader of the database file's size in bytes, synchronous (for a gauge); undefined on PostgreSQL. */
export function fileBytesReader(db: Db): (() => number) | undefined {
  if (db.backend !== 'sqlite') return undefined;
  const stmt = db.sqlite.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').pluck();
  return () => Number(stmt.get());
}

/** SQLite: writes a copy of the database to `file`, one read transaction's snapshot (consistent while others write). */
export async function vacuumInto(db: Db, file: string): Promise<void> {
  await db.exclusive(({ sqlite }) => sqlite.prepare('VACUUM INTO ?').run(file));
}
