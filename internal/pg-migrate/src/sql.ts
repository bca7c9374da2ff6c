import type postgres from 'postgres';

/**
 * The postgres.js handle every Holdfast PostgreSQL API takes: what a pool (`postgres(url)`), a
 * reserved connection and a transaction (`sql.begin(tx => ...)`) have in common. APIs that need
 * the pool itself (a claim that must commit on its own, a transaction they open) say so and take
 * `postgres.Sql`.
 *
 * @example
 * ```ts
 * import type { Sql } from '@holdfast/pg-migrate';
 * async function countOrders(sql: Sql): Promise<number> {
 *   const [row] = await sql<{ n: number }[]>`select count(*)::int as n from orders`;
 *   return row?.n ?? 0;
 * }
 * ```
 */
export type Sql = postgres.ISql;
