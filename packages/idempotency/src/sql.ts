import { type Db, fromHex, toHex } from '@holdfast/db';
import type { ClaimInput, ClaimResult, HeldKey, IdempotencyStore, StoredResponse } from './store';

// Every statement casts its values and its columns, so postgres.js, node-postgres, Drizzle,
// Kysely and Prisma pass the same text in and hand the same JS types back: timestamps as ISO
// text in and epoch ms out, headers as JSON text, the body as hex.

/**
 * The claim, one round trip. The INSERT claims a free key, or takes over one whose answer
 * expired or whose lease ended unanswered (a dead process). Otherwise the second SELECT reads
 * the holder; it sees the statement's snapshot, so a holder that committed after the snapshot
 * was taken yields no row: the statement then simply runs again with a fresh snapshot.
 */
export const CLAIM = `
with claimed as (
  insert into holdfast_idempotency_keys as k
    (account, key, fingerprint, token, locked_until, created_at, expires_at)
  values ($1::text, $2::text, $3::text, $4::text, $5::timestamptz, $6::timestamptz, $7::timestamptz)
  on conflict (account, key) do update set
    fingerprint = excluded.fingerprint, token = excluded.token,
    locked_until = excluded.locked_until, created_at = excluded.created_at,
    expires_at = excluded.expires_at, response_status = null,
    response_headers = null, response_body = null
  where k.expires_at <= $6::timestamptz
     or (k.response_status is null and k.locked_until <= $6::timestamptz)
  returning true as claimed, k.fingerprint, k.locked_until, k.response_status,
            k.response_headers, k.response_body
),
found as (
  select * from claimed
  union all
  select false, fingerprint, locked_until, response_status, response_headers, response_body
  from holdfast_idempotency_keys
  where account = $1::text and key = $2::text and not exists (select from claimed)
)
select claimed, fingerprint, (extract(epoch from locked_until) * 1000)::float8 as locked_until_ms,
       response_status::int as response_status, response_headers::text as response_headers,
       encode(response_body, 'hex') as response_body
from found`;

/** Stores the answer, for the token that holds the key; values from {@link storeAnswerValues}. */
export const STORE_ANSWER = `
update holdfast_idempotency_keys
set response_status = $4::int, response_headers = $5::text::jsonb,
    response_body = decode($6::text, 'hex'), expires_at = $7::timestamptz, token = null
where account = $1::text and key = $2::text and token = $3::text and response_status is null
returning 1 as stored`;

/**
 * {@link STORE_ANSWER} that raises (division by zero, SQLSTATE 22012) when no row was stored:
 * sent right before COMMIT, it turns that COMMIT into a rollback when the lease was lost.
 */
export const STORE_ANSWER_OR_RAISE: string = `
with stored as (${STORE_ANSWER})
select 1 / count(*) as owned from stored`;

const EXTEND = `
update holdfast_idempotency_keys set locked_until = $4::timestamptz
where account = $1::text and key = $2::text and token = $3::text and response_status is null
returning 1 as extended`;

const RELEASE = `
delete from holdfast_idempotency_keys
where account = $1::text and key = $2::text and token = $3::text and response_status is null`;

// Each batch its own short statement that skips rows a request has locked.
const PURGE = `
with deleted as (
  delete from holdfast_idempotency_keys
  where (account, key) in (
    select account, key from holdfast_idempotency_keys
    where expires_at <= $1::timestamptz
    limit $2::int
    for update skip locked)
  returning 1)
select count(*)::int as deleted from deleted`;

interface ClaimRow {
  claimed: boolean;
  fingerprint: string;
  locked_until_ms: number;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
}

/** Reads stored headers back from their JSON text, keeping only string values. */
function headersFrom(text: string | null): Record<string, string> {
  const headers: Record<string, string> = {};
  const value: unknown = text === null ? null : JSON.parse(text);
  if (typeof value !== 'object' || value === null) return headers;
  for (const [name, item] of Object.entries(value)) if (typeof item === 'string') headers[name] = item;
  return headers;
}

/** The values of {@link STORE_ANSWER}. */
export function storeAnswerValues(held: HeldKey, response: StoredResponse, expiresAt: Date): unknown[] {
  return [
    held.account,
    held.key,
    held.token,
    response.status,
    JSON.stringify(response.headers),
    response.body === null ? null : toHex(response.body),
    expiresAt.toISOString(),
  ];
}

/**
 * The PostgreSQL store over any {@link Db}: the same statements whichever driver runs them.
 * Given a pool, each operation is its own autocommit statement (other processes see a claim
 * at once); given a transaction, everything joins it.
 *
 * @example
 * ```ts
 * const store = dbIdempotencyStore(fromPg(pool));
 * const response = await runIdempotent(store, request, async () => ({ status: 202, body: await send() }));
 * ```
 */
export function dbIdempotencyStore(db: Db): IdempotencyStore {
  return {
    async claim(input: ClaimInput): Promise<ClaimResult> {
      const values = [
        input.account,
        input.key,
        input.fingerprint,
        input.token,
        input.lockedUntil.toISOString(),
        input.now.toISOString(),
        input.expiresAt.toISOString(),
      ];
      for (let attempt = 0; attempt < 5; attempt++) {
        const [row] = await db.query<ClaimRow>(CLAIM, values);
        if (row === undefined) continue;
        if (row.claimed) return { outcome: 'claimed' };
        if (row.response_status === null) {
          return {
            outcome: 'running',
            fingerprint: row.fingerprint,
            lockedUntil: new Date(row.locked_until_ms),
          };
        }
        return {
          outcome: 'completed',
          fingerprint: row.fingerprint,
          response: {
            status: row.response_status,
            headers: headersFrom(row.response_headers),
            body: row.response_body === null ? null : fromHex(row.response_body),
          },
        };
      }
      throw new Error('idempotency claim did not settle after 5 attempts');
    },

    async complete(held: HeldKey, response: StoredResponse, expiresAt: Date): Promise<boolean> {
      const rows = await db.query(STORE_ANSWER, storeAnswerValues(held, response, expiresAt));
      return rows.length === 1;
    },

    async extend(held: HeldKey, lockedUntil: Date): Promise<boolean> {
      const rows = await db.query(EXTEND, [held.account, held.key, held.token, lockedUntil.toISOString()]);
      return rows.length === 1;
    },

    async release(held: HeldKey): Promise<void> {
      await db.query(RELEASE, [held.account, held.key, held.token]);
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
        const [row] = await db.query<{ deleted: number }>(PURGE, [options.now.toISOString(), batchSize]);
        const deleted = row?.deleted ?? 0;
        total += deleted;
        if (deleted < batchSize) return total;
      }
    },
  };
}
