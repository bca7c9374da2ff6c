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

const IDENTIFIER_CHAR = /[\p{L}\p{N}_$]/u;
const DOLLAR_TAG = /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u;

/**
 * The text between the numbered placeholders (`$1`, `$2`, ...) of a statement, and each
 * placeholder's index, found as PostgreSQL's lexer finds them: not inside a string, a quoted
 * identifier, a comment or a dollar-quoted body (a function's, whose own `$1` is its argument),
 * nor in an identifier that holds a `$`.
 */
function splitPlaceholders(text: string): { parts: string[]; indexes: number[] } {
  const parts: string[] = [];
  const indexes: number[] = [];
  let last = 0;
  let i = 0;
  /** Index just past `close`, searched from `from` (the end of the text if it never comes). */
  const after = (close: string, from: number) => {
    const at = text.indexOf(close, from);
    return at < 0 ? text.length : at + close.length;
  };
  while (i < text.length) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "'") {
      // A string: a quote inside it is doubled (`''`); in an `E'...'` string a backslash
      // escapes the next character too.
      const escapes = /[eE]/.test(text[i - 1] ?? '') && !IDENTIFIER_CHAR.test(text[i - 2] ?? '');
      i += 1;
      while (i < text.length) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] !== "'") i += 1;
        else if (text[i + 1] === "'")
          i += 2; // '' inside the string
        else break;
      }
      i += 1;
    } else if (c === '"') {
      i = after('"', i + 1);
    } else if (c === '-' && next === '-') {
      i = after('\n', i + 2);
    } else if (c === '/' && next === '*') {
      // Block comments nest.
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text.startsWith('/*', i)) depth += 1;
        else if (text.startsWith('*/', i)) depth -= 1;
        else {
          i += 1;
          continue;
        }
        i += 2;
      }
    } else if (c === '$' && !IDENTIFIER_CHAR.test(text[i - 1] ?? '')) {
      const number = /^\$(\d+)/.exec(text.slice(i, i + 12));
      const tag = number ? undefined : DOLLAR_TAG.exec(text.slice(i, i + 64))?.[0];
      if (number) {
        parts.push(text.slice(last, i));
        indexes.push(Number(number[1]) - 1);
        i += number[0].length;
        last = i;
      } else if (tag) {
        i = after(tag, i + tag.length);
      } else {
        i += 1;
      }
    } else if (IDENTIFIER_CHAR.test(c)) {
      // A word: a `$` inside it (`a$1`) is part of it.
      while (i < text.length && IDENTIFIER_CHAR.test(text[i] as string)) i += 1;
    } else {
      i += 1;
    }
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
