import type postgres from 'postgres';
import type { ClaimInput, ClaimResult, HeldKey, IdempotencyStore, StoredResponse } from './store';

/** One versioned migration: record `id` once `sql` is applied, never apply it again. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

/**
 * The store's table as versioned migrations, for any runner that records applied ids (each is
 * also shipped as a plain `.sql` file under `migrations/`). A normal logged table: an unlogged one would lose every
 * stored answer in a crash, exactly when clients retry. `token` names the attempt holding an
 * unanswered key and `locked_until` ends its lease; `expires_at` drives the purge. The first
 * migration says `if not exists` so databases that applied the former idempotent DDL adopt it.
 *
 * @example
 * ```ts
 * import { migrate } from './your-migration-runner';
 * await migrate(sql, [...migrations, ...yourOwnMigrations]);
 * ```
 */
export const migrations: readonly Migration[] = [
  {
    id: '@holdfast/idempotency/001_keys',
    sql: `
create table if not exists holdfast_idempotency_keys (
  account text not null,
  key text not null check (char_length(key) between 1 and 255),
  fingerprint text not null,
  token text,
  locked_until timestamptz not null,
  response_status smallint,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (account, key)
);
create index if not exists holdfast_idempotency_keys_expires_at_idx
  on holdfast_idempotency_keys (expires_at);
`,
  },
];

interface ClaimRow {
  claimed: boolean;
  fingerprint: string;
  locked_until: Date;
  response_status: number | null;
  response_headers: unknown;
  response_body: Uint8Array | null;
}

/** Reads stored headers back from jsonb, keeping only string values. */
function headersFrom(value: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return headers;
  for (const [name, item] of Object.entries(value)) if (typeof item === 'string') headers[name] = item;
  return headers;
}

/** The UPDATE that stores an answer, for the token that holds the key. */
export function storeAnswerQuery(
  sql: postgres.Sql | postgres.TransactionSql,
  held: HeldKey,
  response: StoredResponse,
  expiresAt: Date,
): postgres.PendingQuery<postgres.Row[]> {
  return sql`
    update holdfast_idempotency_keys
    set response_status = ${response.status}, response_headers = ${sql.json(response.headers)},
        response_body = ${response.body}, expires_at = ${expiresAt}, token = null
    where account = ${held.account} and key = ${held.key} and token = ${held.token}
      and response_status is null
    returning 1`;
}

/**
 * Keys in `holdfast_idempotency_keys` (see {@link migrations}), shared by every process on the
 * database. Each operation is one autocommit statement: a claim is visible to other
 * processes at once, so they answer 409 or 422 while the first request runs. Takes the pool
 * (`Sql`), never a transaction, for that reason.
 *
 * @example
 * ```ts
 * const store = postgresIdempotencyStore(sql);
 * app.post('/v1/emails', idempotency({ store, account: (c) => c.get('account') }), sendEmailRoute);
 * setInterval(() => void store.purge({ now: new Date() }), 60_000).unref();
 * ```
 */
export function postgresIdempotencyStore(sql: postgres.Sql): IdempotencyStore {
  return {
    async claim(input: ClaimInput): Promise<ClaimResult> {
      // One round trip. The INSERT claims a free key, or takes over one whose answer expired or
      // whose lease ended unanswered (a dead process). Otherwise the second SELECT reads the
      // holder; it sees the statement's snapshot, so a holder that committed after the snapshot
      // was taken yields no row: the statement then simply runs again with a fresh snapshot.
      for (let attempt = 0; attempt < 5; attempt++) {
        const [row] = await sql<ClaimRow[]>`
        with claimed as (
          insert into holdfast_idempotency_keys as k
            (account, key, fingerprint, token, locked_until, created_at, expires_at)
          values (${input.account}, ${input.key}, ${input.fingerprint}, ${input.token},
                  ${input.lockedUntil}, ${input.now}, ${input.expiresAt})
          on conflict (account, key) do update set
            fingerprint = excluded.fingerprint, token = excluded.token,
            locked_until = excluded.locked_until, created_at = excluded.created_at,
            expires_at = excluded.expires_at, response_status = null,
            response_headers = null, response_body = null
          where k.expires_at <= ${input.now}
             or (k.response_status is null and k.locked_until <= ${input.now})
          returning true as claimed, k.fingerprint, k.locked_until, k.response_status,
                    k.response_headers, k.response_body
        )
        select * from claimed
        union all
        select false, fingerprint, locked_until, response_status, response_headers, response_body
        from holdfast_idempotency_keys
        where account = ${input.account} and key = ${input.key} and not exists (select from claimed)`;
        if (row === undefined) continue;
        if (row.claimed) return { outcome: 'claimed' };
        if (row.response_status === null) {
          return { outcome: 'running', fingerprint: row.fingerprint, lockedUntil: row.locked_until };
        }
        return {
          outcome: 'completed',
          fingerprint: row.fingerprint,
          response: {
            status: row.response_status,
            headers: headersFrom(row.response_headers),
            body: row.response_body === null ? null : new Uint8Array(row.response_body),
          },
        };
      }
      throw new Error('idempotency claim did not settle after 5 attempts');
    },

    async complete(held: HeldKey, response: StoredResponse, expiresAt: Date): Promise<boolean> {
      const rows = await storeAnswerQuery(sql, held, response, expiresAt);
      return rows.length === 1;
    },

    async extend(held: HeldKey, lockedUntil: Date): Promise<boolean> {
      const rows = await sql`
      update holdfast_idempotency_keys set locked_until = ${lockedUntil}
      where account = ${held.account} and key = ${held.key} and token = ${held.token}
        and response_status is null
      returning 1`;
      return rows.length === 1;
    },

    async release(held: HeldKey): Promise<void> {
      await sql`
      delete from holdfast_idempotency_keys
      where account = ${held.account} and key = ${held.key} and token = ${held.token}
        and response_status is null`;
    },

    /**
     * Deletes expired rows in batches of `batchSize` (default 500), each its own short
     * statement that skips rows a request has locked, so the purge never makes a request wait.
     */
    async purge(options: { now: Date; batchSize?: number }): Promise<number> {
      const batchSize = options.batchSize ?? 500;
      if (!Number.isInteger(batchSize) || batchSize < 1)
        throw new RangeError('batchSize must be a positive integer');
      let total = 0;
      for (;;) {
        const deleted = await sql`
        delete from holdfast_idempotency_keys
        where (account, key) in (
          select account, key from holdfast_idempotency_keys
          where expires_at <= ${options.now}
          limit ${batchSize}
          for update skip locked)`;
        total += deleted.count;
        if (deleted.count < batchSize) return total;
      }
    },
  };
}
