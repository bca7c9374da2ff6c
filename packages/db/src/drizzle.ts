import type { Db, Transaction } from './index';
import { rowsOf } from './rows';

/**
 * The slice of a Drizzle database or transaction an adapter needs (node-postgres or
 * postgres.js); `Query` is Drizzle's `SQL`.
 */
export interface DrizzleLike<Query> {
  execute(query: Query): PromiseLike<unknown>;
}

/**
 * The slice of Drizzle's `sql` tag an adapter needs, passed in so this package needs no
 * drizzle-orm of its own: `Chunk` is Drizzle's `SQLChunk`, `Query` its `SQL`.
 */
export interface DrizzleSqlTag<Chunk, Query> {
  raw(text: string): Chunk;
  param(value: unknown): Chunk;
  join(chunks: Chunk[]): Query;
}

/** The slice of a Drizzle database {@link drizzleTransaction} needs: its `transaction`. */
export interface DrizzleDatabaseLike<Tx> {
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

// `$1..$n` outside quotes; Holdfast statements hold no `$` in literals or dollar quotes.
const PLACEHOLDER = /\$(\d+)/g;

function splitPlaceholders(text: string): { parts: string[]; indexes: number[] } {
  const parts: string[] = [];
  const indexes: number[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    parts.push(text.slice(last, match.index));
    indexes.push(Number(match[1]) - 1);
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return { parts, indexes };
}

/**
 * A Drizzle database or transaction (on node-postgres or postgres.js) as a {@link Db}. Pass
 * your own `sql` tag from drizzle-orm.
 *
 * @example
 * ```ts
 * import { sql } from 'drizzle-orm';
 * await db.transaction((tx) => enqueueEvent(fromDrizzle(tx, sql), event));
 * ```
 */
export function fromDrizzle<Chunk, Query>(tx: DrizzleLike<Query>, sql: DrizzleSqlTag<Chunk, Query>): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      const { parts, indexes } = splitPlaceholders(text);
      const chunks: Chunk[] = [];
      parts.forEach((part, i) => {
        chunks.push(sql.raw(part));
        const index = indexes[i];
        if (index !== undefined) chunks.push(sql.param(values[index]));
      });
      return rowsOf<Row>(await tx.execute(sql.join(chunks)));
    },
  };
}

/**
 * Transactions of a Drizzle database as a {@link Transaction}: `db.transaction`, with `tx`
 * typed as that database's transaction and the same transaction as a `Db`.
 *
 * @example
 * ```ts
 * import { sql } from 'drizzle-orm';
 * const transaction = drizzleTransaction(db, sql);
 * await transaction(async (tx, hf) => {
 *   await tx.insert(orders).values({ id });
 *   await enqueueEvent(hf, event);
 * });
 * ```
 */
export function drizzleTransaction<Tx extends DrizzleLike<Query>, Chunk, Query>(
  db: DrizzleDatabaseLike<Tx>,
  sql: DrizzleSqlTag<Chunk, Query>,
): Transaction<Tx> {
  return (work) => db.transaction((tx) => work(tx, fromDrizzle(tx, sql)));
}
