import type { Db } from '@holdfast/db';
import { problem } from './problems';

/** At most `limit` actions per `windowMs`, counted per endpoint in a fixed window. */
export interface WindowQuota {
  readonly limit: number;
  readonly windowMs: number;
}

/** The actions with a per-endpoint quota, and how a refusal names them. */
const ACTIONS = {
  test: 'test events',
  recover: 'recoveries',
} as const;

export type QuotaAction = keyof typeof ACTIONS;

const TAKE = `insert into holdfast_endpoint_quotas as q (endpoint_id, action, window_start, used)
  values ($1::text, $2::text, $3::timestamptz, 1)
  on conflict (endpoint_id, action) do update set
    window_start = case when q.window_start <= $4::timestamptz then excluded.window_start else q.window_start end,
    used = case when q.window_start <= $4::timestamptz then 1 else q.used + 1 end
  returning used, window_start`;

/**
 * Counts one `action` against the endpoint's quota for the current window, inside the caller's
 * transaction, or throws 429 `rate_limited` with `Retry-After` (the seconds until the window
 * ends). The upsert holds the row's lock until the transaction ends, so requests from every
 * process count exactly, and a request that fails later takes its count back with its rollback.
 * Called after the endpoint was found and authorized: another account's endpoint is 404, never 429.
 */
export async function takeEndpointQuota(
  tx: Db,
  {
    endpointId,
    action,
    quota,
    now,
  }: { endpointId: string; action: QuotaAction; quota: WindowQuota; now: number },
): Promise<void> {
  const at = new Date(now);
  const expired = new Date(now - quota.windowMs);
  const [row] = await tx.query<{ used: number; window_start: Date | string }>(TAKE, [
    endpointId,
    action,
    at,
    expired,
  ]);
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
