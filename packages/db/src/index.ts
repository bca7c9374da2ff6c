/**
 * The one thing every Holdfast statement needs from a database driver: run `text` (placeholders
 * `$1..$n`) with positional `values` and hand back the rows. Any driver satisfies it in a few
 * lines, so a statement that must join the caller's transaction (the idempotency claim and
 * answer, the outbox write, the page query) runs on whatever connection or transaction the
 * caller already holds. Statements cast in SQL so every driver returns the same JS types.
 *
 * Adapters for postgres.js, node-postgres, Drizzle, Kysely and Prisma live on their own
 * subpaths (`@holdfast/db/postgres`, `/pg`, `/drizzle`, `/kysely`, `/prisma`).
 *
 * @example
 * ```ts
 * const db: Db = { query: async (text, values) => (await pool.query(text, values as unknown[])).rows };
 * ```
 */
export interface Db {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<Row[]>;
}

/**
 * One transaction of your driver: runs `work` with the driver's own transaction (`tx`, what
 * your code writes through) and the same transaction as a {@link Db}; commits when `work`
 * resolves, rolls back and rethrows when it throws. Each adapter subpath builds one
 * (`pgTransaction(pool)`, `drizzleTransaction(db, sql)`, ...), typed with that driver's
 * transaction, so a handler's `tx` needs no annotation.
 *
 * @example
 * ```ts
 * const transaction: Transaction<pg.PoolClient> = pgTransaction(pool);
 * const id = await transaction(async (client, db) => (await db.query<{ id: string }>('select $1::text as id', ['a']))[0]);
 * ```
 */
export type Transaction<Tx> = <T>(work: (tx: Tx, db: Db) => Promise<T>) => Promise<T>;

/**
 * LISTEN/NOTIFY for wake-ups, without a driver in the package that listens: each driver's
 * subpath builds one (`pgListener(pool)`, `postgresListener(sql)`). `listen` calls `onNotify`
 * with each notification's payload on `channel`, and with `''` each time the listening
 * connection (re)connects, since whatever was sent while it was away is lost; it reconnects by
 * itself, and resolves, with the function that stops it, once the first attempt to listen has
 * succeeded or failed (a caller keeps polling either way: a notification is a hint, never the
 * only way work is found).
 *
 * @example
 * ```ts
 * const stop = await listener.listen('orders_due', () => wake());
 * ```
 */
export interface Listener {
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

export { type DatabaseFailure, databaseFailure } from './database-failure';
export { fromHex, toHex } from './hex';
export { type Loop, type LoopOptions, startLoop } from './loop';
export { type GuardedJob, unlessRunning } from './periodic';
export { statementName } from './statement-name';
export { withStatementTimeout } from './statement-timeout';
