import type { Sql, TransactionSql } from 'postgres';
import type { Db, Listener, Transaction } from './index';
import { reconnectDelay } from './retry';
import { rowsOf } from './rows';

/** The slice of a postgres.js `Sql` or transaction an adapter needs. */
export interface PostgresJsLike {
  unsafe(text: string, values?: unknown[], options?: { prepare?: boolean }): PromiseLike<unknown>;
}

/**
 * A postgres.js `Sql` (the pool), reserved connection or transaction as a {@link Db}; every
 * statement is prepared (postgres.js names them itself).
 *
 * @example
 * ```ts
 * await sql.begin((tx) => enqueueEvent(fromPostgres(tx), event));
 * ```
 */
export function fromPostgres(sql: PostgresJsLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      return rowsOf<Row>(await sql.unsafe(text, [...values], { prepare: true }));
    },
  };
}

/**
 * Transactions of a postgres.js pool as a {@link Transaction}: `sql.begin`, with the
 * transaction `tx` typed as postgres.js's `TransactionSql` and the same transaction as a `Db`.
 *
 * @example
 * ```ts
 * const transaction = postgresTransaction(sql);
 * await transaction(async (tx, db) => {
 *   await tx`insert into orders (id) values (${id})`;
 *   await enqueueEvent(db, event);
 * });
 * ```
 */
export function postgresTransaction<Types extends Record<string, unknown>>(
  sql: Sql<Types>,
): Transaction<TransactionSql<Types>> {
  return async <T>(work: (tx: TransactionSql<Types>, db: Db) => Promise<T>): Promise<T> => {
    // `begin` unwraps arrays in what it returns; the answer is carried out as it is.
    const out: { answer?: { value: T } } = {};
    await sql.begin(async (tx) => {
      out.answer = { value: await work(tx, fromPostgres(tx)) };
    });
    if (out.answer === undefined) throw new Error('the transaction committed without an answer');
    return out.answer.value;
  };
}

/** The slice of a postgres.js `Sql` a {@link postgresListener} needs. */
export interface PostgresJsListen {
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListen?: () => void,
  ): PromiseLike<{ unlisten(): PromiseLike<unknown> }>;
}

/**
 * LISTEN/NOTIFY on a postgres.js pool as a {@link Listener}. postgres.js holds one dedicated
 * connection for all of a pool's channels and reconnects it by itself; when even the first
 * attempt fails, this one tries again, after 250 ms doubling to 5 s.
 *
 * @example
 * ```ts
 * const worker = startDeliveryWorker({ db: fromPostgres(sql), listener: postgresListener(sql) });
 * ```
 */
export function postgresListener(sql: PostgresJsListen): Listener {
  return {
    async listen(channel, onNotify) {
      let stopped = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let subscription: { unlisten(): PromiseLike<unknown> } | undefined;
      const attempt = async (failures: number): Promise<void> => {
        try {
          const listening = await sql.listen(channel, onNotify, () => onNotify(''));
          if (stopped) await listening.unlisten();
          else subscription = listening;
        } catch {
          if (stopped) return;
          timer = setTimeout(() => {
            timer = undefined;
            void attempt(failures + 1);
          }, reconnectDelay(failures));
        }
      };
      await attempt(0);
      return async () => {
        stopped = true;
        if (timer !== undefined) clearTimeout(timer);
        const listening = subscription;
        subscription = undefined;
        await Promise.resolve(listening?.unlisten()).catch(() => {});
      };
    },
  };
}
