import { opaqueId } from '@holdfast/opaque-id';
import type postgres from 'postgres';
import type { Outcome } from './classify';
import type { LeasedRow } from './lease';

/** What one attempt came to, waiting to be written with the rest of its batch. */
export interface AttemptResult {
  row: LeasedRow;
  status: number | undefined;
  error: string | null;
  prefix: string | null;
  outcome: Outcome;
  nextStatus: 'succeeded' | 'failed' | 'dead';
  nextAttemptAt: Date | null;
  started: number;
  finished: number;
  /** A sign of overload: the endpoint's limit is halved. */
  congested: boolean;
  /** A fast success: the endpoint's limit grows by 1 / limit. */
  fast: boolean;
  /** Until when the endpoint asked (`Retry-After`) not to be sent anything. */
  pauseUntil: Date | null;
}

/** Deadlock between two workers' outcome statements (rows locked in their own orders). */
const DEADLOCK = '40P01';

/**
 * Writes a batch of outcomes in one statement: every attempt row,
 * every delivery's new state and lease release, the success side of endpoint health, the places
 * released counted in this worker's release stripe, and the pacing row only where something
 * changes: its adaptive limit (halved on overload, +1 per `limit` fast successes while under the
 * ceiling) or a `Retry-After` pause. In steady state no outcome statement touches the pacing row
 * the lease statements lock, so workers in several processes do not queue behind each other.
 * Only leases this worker still owns are released: one taken over after an expiry belongs to
 * its new owner, whose own outcome releases it.
 */
export async function writeOutcomes(
  sql: postgres.Sql,
  {
    owner,
    stripe,
    perEndpoint,
    batch,
  }: { owner: string; stripe: number; perEndpoint: number; batch: readonly AttemptResult[] },
): Promise<void> {
  const column = <T>(pick: (r: AttemptResult) => T) => batch.map(pick);
  for (let tries = 1; ; tries += 1) {
    try {
      await sql`
        with r as (
          select * from unnest(
            ${column((r) => r.row.id)}::text[],
            ${column(() => opaqueId('att'))}::text[],
            ${column((r) => r.row.account_id)}::text[],
            ${column((r) => r.row.endpoint_id)}::text[],
            ${column((r) => r.status ?? null)}::int[],
            ${column((r) => r.error)}::text[],
            ${column((r) => Math.max(0, Math.round(r.finished - r.started)))}::int[],
            ${column((r) => r.prefix)}::text[],
            ${column((r) => new Date(r.finished).toISOString())}::timestamptz[],
            ${column((r) => r.nextStatus)}::text[],
            ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
            ${column((r) => (r.congested ? 't' : 'f'))}::text[]::bool[],
            ${column((r) => (r.fast ? 't' : 'f'))}::text[]::bool[],
            ${column((r) => r.pauseUntil?.toISOString() ?? null)}::timestamptz[]
          ) as r (id, attempt_id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished,
                  next_status, next_attempt_at, congested, fast, pause_until)
        ),
        attempts as (
          insert into holdfast_delivery_attempts
            (id, delivery_id, account_id, endpoint_id, status, error, latency_ms, response_body_prefix, created_at)
          select attempt_id, id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished from r
        ),
        healthy as (
          update holdfast_webhook_endpoints e set failing_since = null, disable_warned_at = null
          where e.failing_since is not null
            and e.id in (select endpoint_id from r where next_status = 'succeeded')
        ),
        done as (
          update holdfast_deliveries d set
            status = r.next_status,
            attempt_count = d.attempt_count + 1,
            next_attempt_at = r.next_attempt_at,
            last_attempt_at = r.finished,
            last_status = r.http_status,
            last_error = r.error,
            lease_owner = null, lease_expires_at = null,
            updated_at = r.finished
          from r where d.id = r.id and d.lease_owner = ${owner}
          returning d.endpoint_id
        ),
        released as (
          insert into holdfast_endpoint_releases (endpoint_id, stripe, released)
          select endpoint_id, ${stripe}, count(*) from done group by endpoint_id order by endpoint_id
          on conflict (endpoint_id, stripe) do update
            set released = holdfast_endpoint_releases.released + excluded.released
        ),
        per_endpoint as (
          select r.endpoint_id, bool_or(r.congested) as congested, (count(*) filter (where r.fast))::real as fast,
                 max(r.pause_until) as pause_until
          from r group by r.endpoint_id
        ),
        locked as (
          select p.endpoint_id from holdfast_endpoint_pacing p join per_endpoint s on s.endpoint_id = p.endpoint_id
          where s.congested
             or (s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until))
             or (s.fast > 0 and coalesce(p.concurrency_limit, ${perEndpoint}) < ${perEndpoint})
             or p.concurrency_max is distinct from ${perEndpoint}
          order by p.endpoint_id
          for update of p
        )
        update holdfast_endpoint_pacing p set
          concurrency_max = ${perEndpoint},
          concurrency_limit = case
            when s.congested then greatest(1, least(coalesce(p.concurrency_limit, ${perEndpoint}), ${perEndpoint}) / 2)
            else least(${perEndpoint}, least(coalesce(p.concurrency_limit, ${perEndpoint}), ${perEndpoint})
                       + s.fast / greatest(1, least(coalesce(p.concurrency_limit, ${perEndpoint}), ${perEndpoint})))
          end,
          paused_until = case when s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until)
                              then s.pause_until else p.paused_until end
        from per_endpoint s
        where p.endpoint_id = s.endpoint_id and s.endpoint_id in (select endpoint_id from locked)`;
      return;
    } catch (error) {
      // Two workers' batches can lock the same rows in different orders; PostgreSQL
      // breaks the cycle by failing one, which simply writes again.
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== DEADLOCK || tries >= 5) throw error;
    }
  }
}
