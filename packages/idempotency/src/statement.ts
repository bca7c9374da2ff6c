import type { Db } from '@holdfast/db';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import { answerExisting, type IdempotentRequest, prepareClaim } from './request';
import { type HandlerResult, storeResponse, toResponse } from './response';
import { answerValues, readKey, SETTLE_ATTEMPTS, statements } from './sql';

/**
 * A write whose answer is known before it runs (the row's id, timestamps and version built in
 * code), given to {@link idempotentStatement}.
 */
export interface IdempotentWrite {
  /** The answer: status (2xx to 4xx), headers and a JSON body. Stored for replays as it is. */
  readonly answer: Exclude<HandlerResult, Response>;
  /**
   * The business writes as SQL text with its own `$1..$n` values: comma-separated
   * data-modifying CTEs (`name as (insert ...)`), each writing only when `claimed` (an SQL
   * condition) holds: `insert into t (...) select $1, $2 where ${claimed}`, or reading from a
   * CTE that does. Called once per statement sent.
   */
  readonly writes: (claimed: string) => { readonly text: string; readonly values?: readonly unknown[] };
}

/**
 * The one-statement path for a write whose answer is known before it runs: claims the key, does
 * the business writes and stores the answer in ONE statement on `db` (one round trip, one
 * commit), on any driver:
 *
 * ```sql
 * with holdfast_claim as (insert into holdfast_idempotency_keys ... values (..., <the answer>)
 *                         on conflict (account, key) do update ... where <the answer expired>
 *                         returning 1),
 *      <your writes, each gated on exists (select from holdfast_claim)>
 * select count(*) from holdfast_claim
 * ```
 *
 * The key's row is written already answered, so a crash leaves either everything or nothing. A
 * concurrent request with the same key waits on the key's unique index until this statement
 * commits, then finds the stored answer. When the key is held (a replay, another request under
 * the same key), nothing is written and the holder answers: the replay, 422 or 409. Without a
 * key (and none required) the writes run alone. A statement that fails (a constraint, the
 * database going away) writes nothing, the key included, so the client can retry at once. Pass
 * the pool (or any `Db` outside a transaction), so the statement commits on its own.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use`, 422 `idempotency_key_reused`; RangeError for a 5xx `answer`;
 * whatever the statement raises.
 * @example
 * ```ts
 * const order = { id: 'ord_1', total: 4200, createdAt: new Date().toISOString() };
 * const response = await idempotentStatement(
 *   fromPg(pool),
 *   { key: 'k-1', account: 'acct_1', method: 'POST', path: '/v1/orders', body: { total: 4200 } },
 *   {
 *     answer: { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order },
 *     writes: (claimed) => ({
 *       text: `created as (insert into orders (id, total, created_at) select $1, $2, $3::timestamptz where ${claimed})`,
 *       values: [order.id, order.total, order.createdAt],
 *     }),
 *   },
 * );
 * ```
 */
export async function idempotentStatement(
  db: Db,
  request: IdempotentRequest,
  write: IdempotentWrite,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const resolved = resolveIdempotencyOptions(options);
  const claim = await prepareClaim(request, resolved);
  const response = toResponse(write.answer);
  if (response.status >= 500) throw new RangeError('an idempotent write answers 2xx to 4xx');
  if (claim === undefined) {
    const alone = write.writes('true');
    await db.query(`with ${alone.text} select 1`, alone.values ?? []);
    return response;
  }
  const sql = statements(resolved.schema);
  const stored = await storeResponse(response, resolved.storedHeaders);
  for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
    const writes = write.writes('exists (select from holdfast_claim)');
    // The caller's values keep their numbers; the claim's follow them.
    const own = writes.values ?? [];
    const [row] = await db.query<{ claimed: number }>(
      `with holdfast_claim as (${sql.answeredClaim(own.length + 1)}), ${writes.text}
select count(*)::int as claimed from holdfast_claim`,
      [
        ...own,
        claim.account,
        claim.key,
        claim.fingerprint,
        claim.now.toISOString(),
        claim.expiresAt.toISOString(),
        ...answerValues(stored),
      ],
    );
    if (row?.claimed === 1) return response;
    // The key is held: its holder answers. Gone meanwhile (purged): the statement runs again.
    const held = await readKey(db, sql, claim.account, claim.key);
    if (held !== undefined && held.outcome !== 'claimed')
      return answerExisting(held, claim, resolved, request.requestId);
  }
  throw new Error(`idempotency claim did not settle after ${SETTLE_ATTEMPTS} attempts`);
}
