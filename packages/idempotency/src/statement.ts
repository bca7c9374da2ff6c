import type postgres from 'postgres';
import { idempotent } from './idempotent';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import { type IdempotentRequest, prepareClaim } from './request';
import { type HandlerResult, storeResponse, toResponse } from './response';

/** A fragment of a postgres.js statement (`sql\`...\``), composed into a larger one. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * A write whose answer is known before it runs (the row's id, timestamps and version built in
 * code), given to {@link idempotentStatement}.
 */
export interface IdempotentWrite {
  /** The answer: status (2xx to 4xx), headers and a JSON body. Stored for replays as it is. */
  readonly answer: Exclude<HandlerResult, Response>;
  /**
   * The business writes: comma-separated data-modifying CTEs (`name as (insert ...)`), each
   * writing only when `claimed` holds (`insert into t (...) select ... where ${claimed}`, or
   * reading from a CTE that does). Called once per statement sent.
   */
  readonly writes: (claimed: Fragment) => Fragment;
}

interface ClaimedRow {
  claimed: number;
}

/**
 * The one-statement flow for a write whose answer is known before it runs: claims the key,
 * does the business writes and stores the answer in ONE statement (one round trip, one commit):
 *
 * ```sql
 * with holdfast_claim as (insert into holdfast_idempotency_keys ... values (..., <the answer>)
 *                         on conflict (account, key) do nothing returning 1),
 *      <your writes, each gated on exists (select from holdfast_claim)>
 * select count(*) from holdfast_claim
 * ```
 *
 * The key's row is written already answered, so a crash leaves either everything or nothing.
 * A concurrent request with the same key waits on the key's unique index until this statement
 * commits, then finds the stored answer. When the key is already there (a replay, a different
 * request under the same key, an expired answer or an abandoned lease), nothing is written and
 * the request takes the path of {@link idempotent}: replay, 422, 409, or a takeover that runs
 * the same writes in its transaction. Without a key (and none required) the writes run alone.
 *
 * A statement that fails (a constraint, the database going away) writes nothing, the key
 * included, so the client can retry at once. Pass the pool, never a transaction.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use`, 422 `idempotency_key_reused`; whatever the statement raises.
 * @example
 * ```ts
 * const order = { id: 'ord_1', total: 4200, createdAt: new Date().toISOString() };
 * const response = await idempotentStatement(
 *   sql,
 *   { key: 'k-1', account: 'acct_1', method: 'POST', path: '/v1/orders', body: { total: 4200 } },
 *   {
 *     answer: { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order },
 *     writes: (claimed) => sql`
 *       created as (
 *         insert into orders (id, total, created_at)
 *         select ${order.id}, ${order.total}, ${order.createdAt}::timestamptz where ${claimed})`,
 *   },
 * );
 * ```
 */
export async function idempotentStatement(
  sql: postgres.Sql,
  request: IdempotentRequest,
  write: IdempotentWrite,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const resolved = resolveIdempotencyOptions(options);
  const claim = await prepareClaim(request, resolved);
  const response = toResponse(write.answer);
  if (response.status >= 500) throw new RangeError('an idempotent write answers 2xx to 4xx');
  if (claim === undefined) {
    await sql`with ${write.writes(sql`true`)} select 1`;
    return response;
  }
  const stored = await storeResponse(response, resolved.storedHeaders);
  const [row] = await sql<ClaimedRow[]>`
    with holdfast_claim as (
      insert into holdfast_idempotency_keys
        (account, key, fingerprint, token, locked_until, created_at, expires_at,
         response_status, response_headers, response_body)
      values (${claim.account}, ${claim.key}, ${claim.fingerprint}, null, ${claim.now}, ${claim.now},
              ${claim.expiresAt}, ${stored.status}, ${sql.json(stored.headers)}, ${stored.body})
      on conflict (account, key) do nothing
      returning 1
    ),
    ${write.writes(sql`exists (select from holdfast_claim)`)}
    select count(*)::int as claimed from holdfast_claim`;
  if (row?.claimed === 1) return response;
  // The key was there: the usual flow answers it, or takes it over and writes in a transaction.
  return idempotent(
    sql,
    request,
    async (tx) => {
      await tx`with ${write.writes(tx`true`)} select 1`;
      return write.answer;
    },
    options,
  );
}
