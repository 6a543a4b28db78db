// The savepoints of a PostgreSQL transaction's connection, sent lazily with the statement that follows them.
import type pg from 'pg';

export type Executor = Pick<pg.ClientBase, 'query'>;

/**
 * The savepoints of one transaction's connection, sent lazily: each statement is a round trip to the server, and a
 * write unit of the group commit would spend four on savepoints alone (its own and its service's nested one, each
 * opened and released). So SAVEPOINT and RELEASE statements wait, in order, for the next statement and go with it: in
 * the same round trip when that statement has no parameters (the simple protocol runs several statements in one
 * query), just before it otherwise. A savepoint released before any statement ran inside it is never sent, and the
 * releases still waiting at COMMIT or ROLLBACK are dropped (the transaction's end ends every savepoint). A unit that
 * fails rolls back to its savepoint at once, if that savepoint was sent (if not, nothing ran inside it).
 * Statements go through `query` in the order they are made: the connection runs one at a time anyway. A
 * parameterless text of several statements answers with its last statement's result.
 */
export class Savepoints implements Executor {
  /** SAVEPOINT / RELEASE statements not sent yet, in order (after the transaction's BEGIN while that is not sent) */
  private waiting: string[] = [];
  /** whether the transaction's BEGIN went to the server (with the first statement; a body that ran none sends none) */
  begun = true;

  constructor(private readonly client: pg.PoolClient) {}

  /** The transaction's BEGIN, sent as the savepoints are: with its first statement. */
  begin(text: string): void {
    this.waiting.push(text);
    this.begun = false;
  }

  open(name: string): void {
    this.waiting.push(`SAVEPOINT ${name}`);
  }

  /**
   * Whether `name` was not sent yet; then it is dropped with what waits after it (nothing ran inside it, and what was
   * opened inside it was released or rolled back unsent too).
   */
  private droppedUnsent(name: string): boolean {
    const at = this.waiting.indexOf(`SAVEPOINT ${name}`);
    if (at < 0) return false;
    this.waiting.length = at;
    return true;
  }

  release(name: string): void {
    if (!this.droppedUnsent(name)) this.waiting.push(`RELEASE SAVEPOINT ${name}`);
  }

  async rollback(name: string): Promise<void> {
    if (this.droppedUnsent(name)) return;
    // Sent: everything still waiting was made after it, inside it, and the rollback undoes it all.
    this.waiting = [];
    await this.client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
  }

  /** Drops what waits (the transaction ends). */
  forget(): void {
    this.waiting = [];
  }

  query = (async (statement: pg.QueryConfig | string) => {
    const config = typeof statement === 'string' ? { text: statement } : statement;
    if (this.waiting.length > 0) {
      const head = this.waiting.join('; ');
      this.waiting = [];
      this.begun = true;
      if (config.values === undefined || config.values.length === 0) {
        const results = await this.client.query({ ...config, text: `${head}; ${config.text}` }) as unknown as pg.QueryResult | pg.QueryResult[];
        return Array.isArray(results) ? results[results.length - 1] : results;
      }
      await this.client.query(head);
    }
    const results = await this.client.query(config) as unknown as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(results) ? results[results.length - 1] : results;
  }) as unknown as Executor['query'];
}
