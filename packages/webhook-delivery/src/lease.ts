import type postgres from 'postgres';
import type { Sql } from './rows';

/** A leased delivery with what its attempt needs, read in the lease statement itself. */
export interface LeasedRow {
  id: string;
  account_id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  attempt_count: number;
  retry_base: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  payload: string;
}

export interface LeaseRequest {
  /** This worker's id, written as `lease_owner`. */
  owner: string;
  /** Deliveries wanted at most (the worker's free slots). */
  limit: number;
  /** The in-flight ceiling per endpoint (`perEndpointConcurrency`). */
  perEndpoint: number;
  at: Date;
  leaseMs: number;
  /** Endpoints this worker saw ask for a pause whose outcome is not written yet. */
  paused: readonly string[];
}

/** Slots granted to this worker for one endpoint by {@link reserveStatement}. */
export interface Grant {
  endpoint_id: string;
  granted: number;
}

/**
 * Leases due deliveries, fair across endpoints (CONTRACT section 6; issue 16), in two short
 * statements so that no lock on an endpoint's shared pacing row is held while deliveries are
 * picked and updated (that made two workers on one hot endpoint slower than one):
 *
 * 1. **Reserve** ({@link reserveStatement}): up to `limit` endpoints with due work, in random
 *    order, not paused by a `Retry-After`; their pacing rows are locked in id order (no deadlock
 *    between workers) and charged, in one autocommit UPDATE, with a grant: the room under the
 *    adaptive limit, the `max_per_second` token bucket, an equal share of `limit`, and what is
 *    due, whichever is least. The grant is computed from the locked row, so the in-flight bound
 *    holds across every worker and process.
 * 2. **Lease** ({@link leaseStatement}): per endpoint, deliveries whose lease expired (a dead
 *    worker's, already counted in flight) and then due unleased ones up to the grant, oldest
 *    first, `FOR UPDATE SKIP LOCKED`, leased and returned with the endpoint's URL and secrets
 *    and the event's bytes.
 * 3. A grant another worker's lease left unused (a race on the same due rows) is given back.
 *
 * A worker killed between 1 and 2 leaves its grant counted; the periodic recount
 * ({@link reconcileInFlight}) returns it. The scans are index probes bounded by the grants,
 * never by the backlog (see bench/delivery's EXPLAIN).
 */
export async function leaseDue(sql: postgres.Sql, request: LeaseRequest): Promise<LeasedRow[]> {
  let grants: Grant[];
  try {
    grants = [...(await reserveStatement(sql, request))];
  } catch (error) {
    // Two rounds (or a round and an outcome statement) that met on the same pacing rows in
    // different orders: PostgreSQL failed this one whole, nothing was charged; the next round
    // simply tries again.
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === '40P01') return [];
    throw error;
  }
  if (grants.length === 0) return [];
  const rows = [...(await leaseStatement(sql, request, grants))];
  const fresh = new Map<string, number>();
  for (const row of rows)
    if (!row.takeover) fresh.set(row.endpoint_id, (fresh.get(row.endpoint_id) ?? 0) + 1);
  const unused = grants
    .map((grant) => ({ id: grant.endpoint_id, n: grant.granted - (fresh.get(grant.endpoint_id) ?? 0) }))
    .filter((grant) => grant.n > 0);
  if (unused.length > 0) {
    await sql`
      update holdfast_endpoint_pacing p set in_flight = greatest(0, p.in_flight - u.n)
      from unnest(${sql.array(unused.map((u) => u.id))}::text[], ${sql.array(unused.map((u) => u.n))}::int[]) as u (id, n)
      where p.endpoint_id = u.id`;
  }
  return rows;
}

/**
 * Step 1 of {@link leaseDue}, not yet run (`bench/delivery` EXPLAINs it): picks endpoints and
 * charges their pacing rows with this round's grants.
 */
export function reserveStatement(sql: Sql, request: LeaseRequest): postgres.PendingQuery<Grant[]> {
  const { at, perEndpoint: max } = request;
  const limitOf = (p: string) =>
    sql.unsafe(`floor(least(coalesce(${p}.concurrency_limit, ${max}), ${max}))::int`);
  return sql<Grant[]>`
    with eligible as materialized (
      select p.endpoint_id, e.max_per_second,
             (select count(*) from (
                select 1 from holdfast_deliveries d
                where d.endpoint_id = p.endpoint_id and d.status in ('pending', 'failed')
                  and d.next_attempt_at <= ${at} and d.lease_expires_at is null
                -- in index order, so the scan stops at the limit (a bitmap scan would first
                -- collect the whole backlog)
                order by d.next_attempt_at
                limit ${request.limit}) due)::int as due,
             exists (
               select 1 from holdfast_deliveries d
               where d.endpoint_id = p.endpoint_id and d.lease_expires_at < ${at}
                 and d.status in ('pending', 'failed')) as expired
      from holdfast_endpoint_pacing p
      join holdfast_webhook_endpoints e on e.id = p.endpoint_id
      where e.status = 'active' and e.deleted_at is null
        and (p.paused_until is null or p.paused_until <= ${at})
        and p.endpoint_id <> all(${sql.array([...request.paused])}::text[])
        and exists (
          select 1 from holdfast_deliveries d
          where d.endpoint_id = p.endpoint_id and d.status in ('pending', 'failed') and d.next_attempt_at <= ${at}
            and (d.lease_expires_at is null or d.lease_expires_at < ${at}))
      order by random()
      limit ${request.limit}
    ),
    share as (
      select greatest(1, floor(${request.limit}::numeric / greatest(1, count(*))))::int as n from eligible
    ),
    locked as (
      select p.endpoint_id from holdfast_endpoint_pacing p
      where p.endpoint_id in (select endpoint_id from eligible)
      order by p.endpoint_id
      for update
    ),
    bucket as (
      select g.endpoint_id, g.due, g.expired, g.max_per_second as rate,
             -- null without a rate (greatest and least skip nulls, so it must stay null)
             case when g.max_per_second is null then null else greatest(1.0, g.max_per_second / 10.0) end as burst
      from eligible g where g.endpoint_id in (select endpoint_id from locked)
    )
    update holdfast_endpoint_pacing p set
      last_grant = greatest(0, least(${limitOf('p')} - p.in_flight, share.n, b.due,
        coalesce(floor(least(b.burst, coalesce(p.tokens, b.burst)
          + extract(epoch from ${at}::timestamptz - coalesce(p.tokens_at, ${at}::timestamptz)) * b.rate))::int, share.n))),
      in_flight = p.in_flight + greatest(0, least(${limitOf('p')} - p.in_flight, share.n, b.due,
        coalesce(floor(least(b.burst, coalesce(p.tokens, b.burst)
          + extract(epoch from ${at}::timestamptz - coalesce(p.tokens_at, ${at}::timestamptz)) * b.rate))::int, share.n))),
      tokens = case when b.rate is null then null else
        least(b.burst, coalesce(p.tokens, b.burst)
          + extract(epoch from ${at}::timestamptz - coalesce(p.tokens_at, ${at}::timestamptz)) * b.rate)
        - greatest(0, least(${limitOf('p')} - p.in_flight, share.n, b.due,
            floor(least(b.burst, coalesce(p.tokens, b.burst)
              + extract(epoch from ${at}::timestamptz - coalesce(p.tokens_at, ${at}::timestamptz)) * b.rate))::int)) end,
      tokens_at = case when b.rate is null then null else ${at}::timestamptz end
    from bucket b, share
    where p.endpoint_id = b.endpoint_id
      and (${limitOf('p')} > p.in_flight or b.expired)
    returning p.endpoint_id, p.last_grant as granted`;
}

/** Step 2 of {@link leaseDue}, not yet run: leases up to each grant, plus expired leases. */
export function leaseStatement(
  sql: Sql,
  request: LeaseRequest,
  grants: readonly Grant[],
): postgres.PendingQuery<(LeasedRow & { takeover: boolean })[]> {
  const { at } = request;
  return sql<(LeasedRow & { takeover: boolean })[]>`
    with grants as (
      select * from unnest(${sql.array(grants.map((g) => g.endpoint_id))}::text[],
                           ${sql.array(grants.map((g) => g.granted))}::int[]) as g (endpoint_id, n)
    ),
    picked as materialized (
      select t.id, true as takeover
      from grants g
      cross join lateral (
        select d.id from holdfast_deliveries d
        where d.endpoint_id = g.endpoint_id and d.lease_expires_at < ${at}
          and d.status in ('pending', 'failed') and d.next_attempt_at <= ${at}
        limit ${request.limit}
        for update of d skip locked
      ) t
      union all
      select f.id, false
      from grants g
      cross join lateral (
        select d.id from holdfast_deliveries d
        where d.endpoint_id = g.endpoint_id and d.status in ('pending', 'failed')
          and d.next_attempt_at <= ${at} and d.lease_expires_at is null
        order by d.next_attempt_at, d.id
        limit g.n
        for update of d skip locked
      ) f
    )
    update holdfast_deliveries d set lease_owner = ${request.owner}, lease_expires_at = ${new Date(at.getTime() + request.leaseMs)}
    from picked, holdfast_webhook_endpoints e, holdfast_events ev
    where d.id = picked.id and e.id = d.endpoint_id and ev.id = d.event_id
    returning d.id, d.account_id, d.event_id, d.endpoint_id, d.event_type, d.attempt_count, d.retry_base,
      e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.payload, picked.takeover`;
}

/**
 * Extends this worker's leases on `ids` (attempts still running), so a long attempt is never
 * taken over while it is alive; a lease another worker took over is left alone.
 */
export async function renewLeases(
  sql: postgres.Sql,
  { owner, ids, until }: { owner: string; ids: readonly string[]; until: Date },
): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update holdfast_deliveries set lease_expires_at = ${until}
    where id = any(${sql.array([...ids])}::text[]) and lease_owner = ${owner}`;
}

/** Gives a lease back unattempted (an error before the attempt), with its in-flight place. */
export async function releaseLease(
  sql: postgres.Sql,
  { owner, id }: { owner: string; id: string },
): Promise<void> {
  await sql`
    with released as (
      update holdfast_deliveries set lease_owner = null, lease_expires_at = null
      where id = ${id} and lease_owner = ${owner}
      returning endpoint_id
    )
    update holdfast_endpoint_pacing p set in_flight = greatest(0, p.in_flight - 1)
    from released where p.endpoint_id = released.endpoint_id`;
}

/**
 * Returns in-flight places that no lease holds any more: a grant a killed worker never used, a
 * lease cleared by hand. A surplus (count above the leases) is only taken back when it was also
 * seen by the previous call (`seen`, carried between calls), so a grant of a lease round in
 * progress, which lives milliseconds, is never mistaken for a leak. The pacing rows are locked
 * first (skipping busy ones), then the leases counted in a second statement whose fresh
 * snapshot sees every lease committed before the lock. Cheap and rare (every few seconds).
 */
export async function reconcileInFlight(sql: postgres.Sql, seen: Map<string, number>): Promise<void> {
  await sql.begin(async (tx) => {
    const locked = await tx<{ endpoint_id: string }[]>`
      select endpoint_id from holdfast_endpoint_pacing where in_flight > 0
      order by endpoint_id limit 1000
      for update skip locked`;
    const now = new Map<string, number>();
    if (locked.length > 0) {
      const surplus = await tx<{ endpoint_id: string; surplus: number }[]>`
        select p.endpoint_id, p.in_flight - (
          select count(*) from holdfast_deliveries d
          where d.endpoint_id = p.endpoint_id and d.lease_expires_at is not null
            and d.status in ('pending', 'failed'))::int as surplus
        from holdfast_endpoint_pacing p
        where p.endpoint_id = any(${tx.array(locked.map((row) => row.endpoint_id))}::text[])`;
      for (const row of surplus) if (row.surplus > 0) now.set(row.endpoint_id, row.surplus);
    }
    const fix = [...now].flatMap(([id, n]) => {
      const before = seen.get(id);
      return before === undefined ? [] : [{ id, n: Math.min(before, n) }];
    });
    seen.clear();
    for (const [id, n] of now) seen.set(id, n);
    if (fix.length === 0) return;
    await tx`
      update holdfast_endpoint_pacing p set in_flight = greatest(0, p.in_flight - f.n)
      from unnest(${tx.array(fix.map((f) => f.id))}::text[], ${tx.array(fix.map((f) => f.n))}::int[]) as f (id, n)
      where p.endpoint_id = f.id`;
  });
}
