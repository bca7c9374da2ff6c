import type { Db, Transaction } from './index';
import { rowsOf } from './rows';

/** A raw compiled query as Kysely's `CompiledQuery.raw(text, values)` builds it. */
export interface KyselyRawQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: {
    readonly kind: 'RawNode';
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly never[];
  };
  readonly queryId: { readonly queryId: string };
}

/** The slice of a Kysely instance or transaction an adapter needs. */
export interface KyselyLike {
  executeQuery(query: KyselyRawQuery): PromiseLike<{ rows: unknown[] }>;
}

/** The slice of a Kysely instance {@link kyselyTransaction} needs: `transaction().execute`. */
export interface KyselyDatabaseLike<Tx> {
  transaction(): { execute<T>(work: (trx: Tx) => Promise<T>): Promise<T> };
}

let queries = 0;

/**
 * A Kysely instance or transaction as a {@link Db}: the statement goes through
 * `executeQuery` as the raw compiled query `CompiledQuery.raw(text, values)` would build.
 *
 * @example
 * ```ts
 * await db.transaction().execute((trx) => enqueueEvent(fromKysely(trx), event));
 * ```
 */
export function fromKysely(trx: KyselyLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      // Kysely keys plugin state by the queryId object; the string only has to be distinct.
      queries += 1;
      const result = await trx.executeQuery({
        sql: text,
        parameters: [...values],
        query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
        queryId: { queryId: `holdfast_${queries}` },
      });
      return rowsOf<Row>(result);
    },
  };
}

/**
 * Transactions of a Kysely instance as a {@link Transaction}: `db.transaction().execute`, with
 * `trx` typed as Kysely's `Transaction<DB>` and the same transaction as a `Db`.
 *
 * @example
 * ```ts
 * const transaction = kyselyTransaction(db);
 * await transaction(async (trx, hf) => {
 *   await trx.insertInto('orders').values({ id }).execute();
 *   await enqueueEvent(hf, event);
 * });
 * ```
 */
export function kyselyTransaction<Tx extends KyselyLike>(db: KyselyDatabaseLike<Tx>): Transaction<Tx> {
  return (work) => db.transaction().execute((trx) => work(trx, fromKysely(trx)));
}
