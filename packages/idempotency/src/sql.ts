import { type Db, fromHex, toHex } from '@holdfast/db';
import { qualify } from '@holdfast/db/migrate';
import type { ClaimInput, ClaimResult, StoredResponse } from './store';

// Every statement of the package, once, as text with $n values, built for the schema of the
// table. Each casts its values and its columns, so postgres.js, node-postgres, Drizzle, Kysely
// and Prisma pass the same text in and hand the same JS types back: timestamps as ISO text in,
// headers as JSON text, the body as hex.

/** The statements for the table under `schema` (unqualified without one). */
export interface Statements {
  /** Claims a free or expired key inside the caller's transaction, or reads who holds it. */
  readonly claim: string;
  /** Reads who holds a key. */
  readonly read: string;
  /** Stores the answer of the attempt whose token holds the key. */
  readonly storeAnswer: string;
  /** One batch of the purge. */
  readonly purge: string;
  /**
   * The CTE of the one-statement path: inserts the key already answered (or takes over one
   * whose answer expired), its values numbered from `$first`.
   */
  answeredClaim(first: number): string;
}

const cache = new Map<string | undefined, Statements>();

export function statements(schema: string | undefined): Statements {
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  const keys = qualify(schema)('holdfast_idempotency_keys');
  // A key is free when absent, when its answer expired, or when an attempt left it unanswered
  // and its lease ended (a row no current path commits, kept for rows written before).
  // The advisory lock of a key (and, with `fingerprint`, of a request under it), one 64-bit
  // number from the table, the account and the key.
  const lockKey = (fingerprint?: string) =>
    `hashtextextended(json_build_array('${keys}', $1::text, $2::text${fingerprint === undefined ? '' : `, ${fingerprint}::text`})::text, 0)`;
  const free = (now: string) =>
    `k.expires_at <= ${now} or (k.response_status is null and k.locked_until <= ${now})`;
  const holder = `fingerprint, response_status::int as response_status, response_headers::text as response_headers,
       encode(response_body, 'hex') as response_body`;
  const made: Statements = {
    // A claim inside the caller's transaction, which must not wait on another transaction's
    // uncommitted claim: the key's advisory lock (held until that transaction ends) tells a
    // running attempt at once. Only the holder of the lock inserts, so the INSERT never waits.
    // Without the lock, the same statement answers from what is committed (a live answer is
    // replayed) or probes the lock of (key, fingerprint) that every holder also takes (shared,
    // released at once) to tell 409 (the same request runs) from 422 (another one does).
    // Otherwise the INSERT claims a free key (absent, its answer expired, or left unanswered by
    // an attempt whose lease ended); the holder it finds is read from the statement's snapshot.
    claim: `
with lock as (
  select s.got,
         case when s.got then (select false from (select pg_advisory_xact_lock(${lockKey('$3')})) x)
              when pg_try_advisory_lock_shared(${lockKey('$3')}) then not pg_advisory_unlock_shared(${lockKey('$3')})
              else true end as same_running
  from (select pg_try_advisory_xact_lock(${lockKey()}) as got offset 0) s
),
claimed as (
  insert into ${keys} as k
    (account, key, fingerprint, token, locked_until, created_at, expires_at)
  select $1::text, $2::text, $3::text, $4::text, $5::timestamptz, $5::timestamptz, $6::timestamptz
  from lock where lock.got
  on conflict (account, key) do update set
    fingerprint = excluded.fingerprint, token = excluded.token,
    locked_until = excluded.locked_until, created_at = excluded.created_at,
    expires_at = excluded.expires_at, response_status = null,
    response_headers = null, response_body = null
  where ${free('$5::timestamptz')}
  returning true as claimed, k.fingerprint, k.response_status, k.response_headers, k.response_body,
            true as live
),
found as (
  select * from claimed
  union all
  select false, fingerprint, response_status, response_headers, response_body,
         expires_at > $5::timestamptz and (response_status is not null or locked_until > $5::timestamptz)
  from ${keys}
  where account = $1::text and key = $2::text and not exists (select from claimed)
)
select coalesce(f.claimed, false) as claimed, f.fingerprint, f.response_status::int as response_status,
       f.response_headers::text as response_headers, encode(f.response_body, 'hex') as response_body,
       f.live, lock.got, lock.same_running
from lock left join found f on true`,
    read: `select false as claimed, ${holder} from ${keys} where account = $1::text and key = $2::text`,
    storeAnswer: `
update ${keys}
set response_status = $4::int, response_headers = $5::text::jsonb,
    response_body = decode($6::text, 'hex'), expires_at = $7::timestamptz, token = null
where account = $1::text and key = $2::text and token = $3::text and response_status is null
returning 1 as stored`,
    // Each batch its own short statement that skips rows a request has locked.
    purge: `
with deleted as (
  delete from ${keys}
  where (account, key) in (
    select account, key from ${keys}
    where expires_at <= $1::timestamptz
    limit $2::int
    for update skip locked)
  returning 1)
select count(*)::int as deleted from deleted`,
    answeredClaim(first) {
      const $ = (n: number) => `$${first + n}`;
      return `insert into ${keys} as k
    (account, key, fingerprint, token, locked_until, created_at, expires_at,
     response_status, response_headers, response_body)
  values (${$(0)}::text, ${$(1)}::text, ${$(2)}::text, null, ${$(3)}::timestamptz, ${$(3)}::timestamptz,
          ${$(4)}::timestamptz, ${$(5)}::int, ${$(6)}::text::jsonb, decode(${$(7)}::text, 'hex'))
  on conflict (account, key) do update set
    fingerprint = excluded.fingerprint, token = null, locked_until = excluded.locked_until,
    created_at = excluded.created_at, expires_at = excluded.expires_at,
    response_status = excluded.response_status, response_headers = excluded.response_headers,
    response_body = excluded.response_body
  where ${free(`${$(3)}::timestamptz`)}
  returning 1`;
    },
  };
  cache.set(schema, made);
  return made;
}

interface HolderRow {
  claimed: boolean;
  fingerprint: string;
  /** The row holds a live answer or a live lease (claim only). */
  live?: boolean;
  /** The key's advisory lock was taken (claim only): no other transaction runs with it. */
  got?: boolean;
  /** Without the lock: the running attempt has this request's fingerprint (claim only). */
  same_running?: boolean | null;
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

/** A claim's row as its result; `undefined` when the statement saw no row (run it again). */
export function resultOf(row: HolderRow | undefined): ClaimResult | undefined {
  if (row === undefined) return undefined;
  if (row.claimed) return { outcome: 'claimed' };
  if (row.response_status === null) return { outcome: 'running', fingerprint: row.fingerprint };
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

/** The values of the stored answer, in the order {@link Statements.answeredClaim} and `storeAnswer` take them. */
export function answerValues(response: StoredResponse): unknown[] {
  return [
    response.status,
    JSON.stringify(response.headers),
    response.body === null ? null : toHex(response.body),
  ];
}

/** How often a statement that saw no row (its holder committed or vanished meanwhile) runs again. */
export const SETTLE_ATTEMPTS = 5;

/**
 * Claims the key in the transaction `db` is, or says who holds it: a committed answer, or
 * another transaction running with the key (its fingerprint told apart by its lock).
 */
export async function claimKey(db: Db, sql: Statements, input: ClaimInput): Promise<ClaimResult> {
  const values = [
    input.account,
    input.key,
    input.fingerprint,
    input.token,
    input.now.toISOString(),
    input.expiresAt.toISOString(),
  ];
  for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
    const [row] = await db.query<HolderRow>(sql.claim, values);
    if (row === undefined) continue;
    if (row.claimed) return { outcome: 'claimed' };
    // A live committed answer (or a live unanswered lease) speaks for itself.
    if (row.fingerprint !== null && row.live) return resultOf(row) ?? { outcome: 'claimed' };
    // Another transaction runs with the key: its request is this one, or another. "Another"
    // is also what the probe sees when the holder committed between this statement's snapshot
    // and its probe (its locks gone, its answer not yet visible): so that answer is asked again,
    // and 422 stands only once it repeats.
    if (!row.got) {
      if (!row.same_running && attempt < SETTLE_ATTEMPTS - 1) continue;
      return {
        outcome: 'running',
        fingerprint: row.same_running ? input.fingerprint : `other:${input.fingerprint}`,
      };
    }
    // The lock was free and the key still not claimable: what it saw changed; run again.
  }
  throw new Error(`idempotency claim did not settle after ${SETTLE_ATTEMPTS} attempts`);
}

/** Reads who holds a key; `undefined` when nobody does. */
export async function readKey(
  db: Db,
  sql: Statements,
  account: string,
  key: string,
): Promise<ClaimResult | undefined> {
  return resultOf((await db.query<HolderRow>(sql.read, [account, key]))[0]);
}

/** Stores the answer for the attempt `token` names; false when it no longer holds the key. */
export async function storeAnswer(
  db: Db,
  sql: Statements,
  held: { readonly account: string; readonly key: string; readonly token: string },
  response: StoredResponse,
  expiresAt: Date,
): Promise<boolean> {
  const rows = await db.query(sql.storeAnswer, [
    held.account,
    held.key,
    held.token,
    ...answerValues(response),
    expiresAt.toISOString(),
  ]);
  return rows.length === 1;
}

/**
 * Deletes rows past `now` in batches of `batchSize`, each its own short statement that skips
 * rows a request has locked, so the purge never makes a request wait. Returns how many went.
 */
export async function purgeKeys(db: Db, sql: Statements, now: Date, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.query<{ deleted: number }>(sql.purge, [now.toISOString(), batchSize]);
    const deleted = row?.deleted ?? 0;
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
