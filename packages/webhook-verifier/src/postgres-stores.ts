import type { Db } from '@holdfast/db';
import type { DedupStore } from './dedup';
import { statements } from './statements';
import type { VersionStore } from './versions';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * A {@link DedupStore} on PostgreSQL, through any driver's `Db`: one `insert ... on conflict`
 * per claim, so concurrent deliveries of one id across processes get exactly one `true`. An
 * expired record is claimed again. Call `purge` from a periodic job. `schema`: where
 * {@link migrations} put the tables (absent: the connection's `search_path`).
 *
 * @example
 * ```ts
 * const dedup = postgresDedupStore(fromPg(pool));
 * // One purge at a time: the next is scheduled once the last has ended, so they never pile up.
 * const purge = () => dedup.purge(Date.now()).catch(console.error).finally(() => setTimeout(purge, 3_600_000).unref());
 * void purge();
 * ```
 */
export function postgresDedupStore(
  db: Db,
  options: { schema?: string; now?: () => number } = {},
): DedupStore {
  const now = options.now ?? Date.now;
  const sql = statements(options.schema);
  return {
    async claim(key, expiresAt) {
      return (await db.query(sql.claimDedup, [key, iso(expiresAt), iso(now())])).length > 0;
    },
    async release(key) {
      await db.query(sql.releaseDedup, [key]);
    },
    async purge(at) {
      const [row] = await db.query<{ n: number }>(sql.purgeDedup, [iso(at)]);
      return row?.n ?? 0;
    },
  };
}

/**
 * A {@link VersionStore} on PostgreSQL, through any driver's `Db`: the compare and the write
 * are one statement, so two deliveries racing for one resource cannot both win. `schema`: where
 * {@link migrations} put the tables (absent: the connection's `search_path`).
 *
 * @example
 * ```ts
 * const versions = postgresVersionStore(fromPg(pool));
 * await versions.advance('sub_1', 7); // true the first time
 * ```
 */
export function postgresVersionStore(db: Db, options: { schema?: string } = {}): VersionStore {
  const sql = statements(options.schema);
  return {
    async advance(resource, version) {
      if (!Number.isSafeInteger(version)) throw new TypeError('version must be a safe integer');
      return (await db.query(sql.advanceVersion, [resource, version])).length > 0;
    },
  };
}
