// The one error of the data layer that a route may meet and must not report as a bug: the database cannot be reached.
/**
 * The database cannot be reached or refuses us (server down or restarting, wrong host, password or database name).
 * At start it ends the process with exit code 2 and a message naming the setting; while serving it is a 503.
 */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    super(`cannot use the PostgreSQL database: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

