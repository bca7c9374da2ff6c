import type { Db, Transaction } from './index';
import { rowsOf } from './rows';

/** The slice of a Prisma client or interactive transaction an adapter needs. */
export interface PrismaLike {
  $queryRawUnsafe(text: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** Options of an interactive Prisma transaction, passed on to `$transaction`. */
export interface PrismaTransactionOptions {
  readonly maxWait?: number;
  readonly timeout?: number;
}

/** The slice of a Prisma client {@link prismaTransaction} needs: its interactive `$transaction`. */
export interface PrismaClientLike<Tx> {
  $transaction<T>(work: (tx: Tx) => Promise<T>, options?: PrismaTransactionOptions): Promise<T>;
}

/**
 * A Prisma client or interactive transaction (Prisma 7 with `@prisma/adapter-pg`) as a
 * {@link Db}, through `$queryRawUnsafe(text, ...values)`: the values stay parameters.
 *
 * @example
 * ```ts
 * await prisma.$transaction((tx) => enqueueEvent(fromPrisma(tx), event));
 * ```
 */
export function fromPrisma(tx: PrismaLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      return rowsOf<Row>(await tx.$queryRawUnsafe(text, ...values));
    },
  };
}

/**
 * Interactive transactions of a Prisma client as a {@link Transaction}: `prisma.$transaction`,
 * with `tx` typed as the client's transaction client and the same transaction as a `Db`.
 * `options` (`maxWait`, `timeout`) go to every `$transaction`.
 *
 * @example
 * ```ts
 * const transaction = prismaTransaction(prisma, { timeout: 10_000 });
 * await transaction(async (tx, db) => {
 *   await tx.order.create({ data: { id } });
 *   await enqueueEvent(db, event);
 * });
 * ```
 */
export function prismaTransaction<Tx extends PrismaLike>(
  prisma: PrismaClientLike<Tx>,
  options?: PrismaTransactionOptions,
): Transaction<Tx> {
  return (work) => prisma.$transaction((tx) => work(tx, fromPrisma(tx)), options);
}
