// Named prepared statements for the PostgreSQL backend. A statement sent unnamed is parsed, analysed and rewritten by
// the server on every call; sent under a name, once per connection, which makes the many small statements of a
// request (a session look-up, rights checks, the telemetry catalogue) markedly cheaper.
//
// Which statements get a name:
// - only those with parameters: a statement without goes by the simple protocol (the savepoints ride along with it,
//   postgres.ts) and is cheap to parse;
// - not those naming a telemetry shard table: shard tables are created, widened and dropped at run time, and their
//   statements are many;
// - not those returning `*`: a column added by a migration of another node would change their result type, which a
//   prepared statement refuses (0A000) instead of planning again (a `*` over a derived table aliased gk_… is over the
//   columns of a statement inside the text, checked by the same rule: pg/pg-staging.ts withSnapshotState);
// - a text seen a second time, while fewer than MAX_NAMES texts have names: what a connection holds stays bounded, and
//   a text made once (a rare filter) never takes a place.
// The name is a hash of the text, so two processes (nodes) never use one name for two texts: behind a pooler that
// supports prepared statements in transaction mode (PgBouncer 1.21+), a server connection may hold the names of
// another node. A pooler that does not (PgBouncer before 1.21) loses or mixes names between transactions: the server
// answers 26000 (no such prepared statement) or 42P05 (already exists), and the process stops naming statements for
// good (postgres.ts runs the failed statement or transaction again, unnamed).
import { createHash } from 'node:crypto';
import { LruCache } from '../lib/lru-cache.ts';

/** Texts with a name, at most; each connection prepares at most these. */
export const MAX_NAMES = 500;
/** Texts seen once, remembered to recognise a second sighting. */
const MAX_SEEN = 2_000;
const UNPREPARABLE = /telemetry_shard_|(?:select|returning|,)\s*(?:"?(?!gk_)\w+"?\.)?\*/i;
/** The server's answers when a pooler does not keep a connection's prepared statements. */
const LOST = new Set(['26000', '42P05']);

/** Whether `err` is one of those answers (without acting on it: PreparedNames.lost does). */
export function isLostPrepared(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && LOST.has(code);
}

export class PreparedNames {
  private readonly names = new Map<string, string>();
  private readonly seen = new LruCache<string, true>(MAX_SEEN);
  /** false once the server showed it does not keep prepared statements between transactions */
  enabled: boolean;

  constructor(enabled = true) {
    this.enabled = enabled;
  }

  /** Texts with a name now (0 once naming stopped). */
  get size(): number {
    return this.names.size;
  }

  /** The name to send `text` under, or undefined to send it unnamed. */
  nameOf(text: string, parameterCount: number): string | undefined {
    if (!this.enabled || parameterCount === 0) return undefined;
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_NAMES || UNPREPARABLE.test(text)) return undefined;
    if (this.seen.get(text) === undefined) {
      this.seen.set(text, true);
      return undefined;
    }
    const name = `gk_${createHash('sha256').update(text).digest('base64url').slice(0, 27)}`;
    this.names.set(text, name);
    return name;
  }

  /**
   * Whether `err` says that prepared statements are not kept (a pooler in transaction mode without their support);
   * naming stops then, and the caller runs again what failed.
   */
  lost(err: unknown): boolean {
    if (!isLostPrepared(err)) return false;
    this.enabled = false;
    this.names.clear();
    return true;
  }
}
