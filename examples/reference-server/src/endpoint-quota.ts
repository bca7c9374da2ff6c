import type postgres from 'postgres';
import type { WindowQuota } from './config';
import { problem } from './problems';

/** The actions with a per-endpoint quota, and how a refusal names them. */
const ACTIONS = {
  test: 'test events',
  recover: 'recoveries',
} as const;

export type QuotaAction = keyof typeof ACTIONS;

/**
 * Counts one `action` against the endpoint's quota for the current window, inside the caller's
 * transaction, or throws 429 `rate_limited` with `Retry-After` (the seconds until the window
 * ends). A fixed window per endpoint and action in `holdfast_endpoint_quotas`: the upsert holds
 * the row's lock until the transaction ends, so requests from every API process count exactly,
 * and a request that fails later (or is refused) takes its count back with its rollback. Call
 * it after the endpoint was found and authorized: another account's endpoint is 404, never 429.
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   await takeEndpointQuota(tx, { endpointId, action: 'test', quota: config.endpointQuotas.testEvents, now: deps.now() });
 *   // ... send the test event
 * });
 * ```
 */
export async function takeEndpointQuota(
  tx: postgres.TransactionSql,
  {
    endpointId,
    action,
    quota,
    now,
  }: { endpointId: string; action: QuotaAction; quota: WindowQuota; now: number },
): Promise<void> {
  const at = new Date(now);
  const expired = new Date(now - quota.windowMs);
  const [row] = await tx<{ used: number; window_start: Date | string }[]>`
    insert into holdfast_endpoint_quotas as q (endpoint_id, action, window_start, used)
    values (${endpointId}, ${action}, ${at}, 1)
    on conflict (endpoint_id, action) do update set
      window_start = case when q.window_start <= ${expired} then excluded.window_start else q.window_start end,
      used = case when q.window_start <= ${expired} then 1 else q.used + 1 end
    returning used, window_start`;
  if (!row || row.used <= quota.limit) return;
  const start =
    row.window_start instanceof Date ? row.window_start.getTime() : Date.parse(String(row.window_start));
  // A request that waited for the row's lock may carry an instant before the window's start.
  const seconds = Math.ceil((start + quota.windowMs - Math.max(now, start)) / 1000);
  throw problem('rate_limited', {
    detail: `This webhook endpoint had its ${quota.limit} ${ACTIONS[action]} of this window (${quota.windowMs / 1000} s); try again after Retry-After seconds.`,
    retryAfter: Number.isFinite(seconds) ? Math.max(1, seconds) : Math.ceil(quota.windowMs / 1000),
  });
}
