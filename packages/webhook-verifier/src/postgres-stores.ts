import type { ISql as Sql } from 'postgres';
import type { DedupStore } from './dedup';
import type { VersionStore } from './versions';

/**
 * A postgres.js client: the pool, or a transaction or savepoint of it.
 *
 * @deprecated Use postgres.js's own `ISql` type (`import type { ISql } from 'postgres'`), the
 * one handle type of every Holdfast PostgreSQL API (this alias is the same type).
 */
export type Client = Sql;

/**
 * A {@link DedupStore} on PostgreSQL: one `insert ... on conflict` per claim, so concurrent
 * deliveries of one id across processes get exactly one `true`. An expired record is claimed
 * again. Call `purge` from a periodic job.
 *
 * @example
 * ```ts
 * const dedup = postgresDedupStore(sql);
 * // One purge at a time: the next is scheduled once the last has ended, so they never pile up.
 * const purge = () => dedup.purge(Date.now()).catch(console.error).finally(() => setTimeout(purge, 3_600_000).unref());
 * void purge();
 * ```
 */
export function postgresDedupStore(sql: Sql, options: { now?: () => number } = {}): DedupStore {
  const now = options.now ?? Date.now;
  return {
    async claim(key, expiresAt) {
      const rows = await sql`
        insert into holdfast_webhook_dedup (key, expires_at)
        values (${key}, ${new Date(expiresAt)})
        on conflict (key) do update set expires_at = excluded.expires_at, created_at = now()
          where holdfast_webhook_dedup.expires_at <= ${new Date(now())}
        returning key`;
      return rows.length > 0;
    },
    async release(key) {
      await sql`delete from holdfast_webhook_dedup where key = ${key}`;
    },
    async purge(at) {
      const result = await sql`delete from holdfast_webhook_dedup where expires_at <= ${new Date(at)}`;
      return result.count;
    },
  };
}

/**
 * A {@link VersionStore} on PostgreSQL: the compare and the write are one statement, so two
 * deliveries racing for one resource cannot both win.
 *
 * @example
 * ```ts
 * const versions = postgresVersionStore(sql);
 * await versions.advance('sub_1', 7); // true the first time
 * ```
 */
export function postgresVersionStore(sql: Sql): VersionStore {
  return {
    async advance(resource, version) {
      if (!Number.isSafeInteger(version)) throw new TypeError('version must be a safe integer');
      const rows = await sql`
        insert into holdfast_webhook_versions (resource, version)
        values (${resource}, ${version})
        on conflict (resource) do update set version = excluded.version, updated_at = now()
          where holdfast_webhook_versions.version < excluded.version
        returning resource`;
      return rows.length > 0;
    },
  };
}
