import type { Sql, TransactionSql } from 'postgres';
import type { DedupStore } from './dedup';
import type { VersionStore } from './versions';

/**
 * Idempotent DDL for the receiver's tables; apply it at start (the reference server's
 * migration runner does). `holdfast_webhook_dedup` keeps accepted `webhook-id`s until
 * `expires_at` (retention chosen by the receiver, 7 days by default, far beyond the 300 s
 * tolerance); `holdfast_webhook_versions` keeps the newest version seen per resource.
 *
 * @example
 * ```ts
 * await sql.unsafe(schema);
 * ```
 */
export const schema: string = `
create table if not exists holdfast_webhook_dedup (
  key text primary key,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index if not exists holdfast_webhook_dedup_expires_at on holdfast_webhook_dedup (expires_at);
create table if not exists holdfast_webhook_versions (
  resource text primary key,
  version bigint not null,
  updated_at timestamptz not null default now()
);
`;

type Client = Sql | TransactionSql;

/**
 * A {@link DedupStore} on PostgreSQL: one `insert ... on conflict` per claim, so concurrent
 * deliveries of one id across processes get exactly one `true`. An expired record is claimed
 * again. Call `purge` from a periodic job.
 *
 * @example
 * ```ts
 * const dedup = postgresDedupStore(sql);
 * setInterval(() => void dedup.purge(Date.now()), 3_600_000).unref();
 * ```
 */
export function postgresDedupStore(sql: Client, options: { now?: () => number } = {}): DedupStore {
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
export function postgresVersionStore(sql: Client): VersionStore {
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
