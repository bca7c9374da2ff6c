import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import { JOB_STATEMENT_TIMEOUT_MS, withStatementTimeout } from './periodic';
import { pgArray } from './pg-array';

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
  /** The most attempts one endpoint may have running in this worker (its share of the slots). */
  endpointShare: number;
  /** This worker's attempts per endpoint still waiting for their answer, counted against `endpointShare`. */
  running: ReadonlyMap<string, number>;
  /**
   * This worker's attempts that have their answer but whose outcome is not written yet, with the
   * `attempt_count` each was leased at: their places are no longer in flight and count as free.
   */
  settled?: readonly { id: string; attemptCount: number }[];
  /**
   * The most unanswered attempts one account may have in this worker while another account's
   * endpoints are in the round: beyond it, an account's deliveries take only the slots left once
   * every other account in the round had what it could take within its share. Absent: no limit.
   */
  accountShare?: number | undefined;
  /** This worker's unanswered attempts per account, counted against `accountShare`. */
  accounts?: ReadonlyMap<string, number> | undefined;
}

/**
 * Leases due deliveries in one statement, fair across endpoints:
 *
 * 1. Up to `limit` endpoints with due work, in random order (those of accounts under their
 *    `accountShare` first), whose pacing row is free
 *    (`FOR UPDATE SKIP LOCKED`: a worker never waits for another, and holds the row for this one
 *    statement only), that are not paused by a `Retry-After`, that have room under their
 *    adaptive limit (or an expired lease to take over), and that run fewer than
 *    `endpointShare` attempts in this worker (a slow endpoint never takes every slot).
 * 2. For each, first the deliveries whose lease expired (a dead worker's: they already count as
 *    in flight), then due unleased ones up to the room left, the token bucket of `max_per_second`
 *    and an equal part of `limit` (an equal part per account, split among its endpoints), oldest
 *    due first, each `FOR UPDATE SKIP LOCKED`; what each account may take within its
 *    `accountShare` first, the rest only in slots left over (work-conserving).
 * 3. The pacing rows are charged (in-flight places, tokens) and the deliveries leased, returning
 *    the endpoint and event columns the attempts need: the whole round is one round trip.
 *
 * An endpoint's in-flight count is the places charged in its locked pacing row minus the places
 * released in its release stripes, so the bound holds across every worker and
 * process without a transaction, and outcome statements never queue behind a lease. The places
 * of this worker's `settled` attempts (answered, outcome not yet written) count as free, taken
 * from the leases in the statement's own snapshot: a place is freed when its
 * answer arrives, not when its outcome commits, and never twice. The scans
 * it needs are index probes bounded by the limit, never by the backlog. The statement is the
 * function `holdfast_lease_deliveries`, defined once in `sql/lease-deliveries.ts`.
 */
export async function leaseDue(sql: postgres.Sql, request: LeaseRequest): Promise<LeasedRow[]> {
  return [...(await leaseStatement(sql, request))];
}

/**
 * The lease statement of {@link leaseDue}, not yet run (for EXPLAIN): `holdfast_lease_deliveries`
 * (`sql/lease-deliveries.ts`) with named arguments.
 */
export function leaseStatement(sql: Sql, request: LeaseRequest): postgres.PendingQuery<LeasedRow[]> {
  const { at } = request;
  const running = [...request.running];
  const settled = request.settled ?? [];
  const accounts = [...(request.accounts ?? [])];
  // The lease commits without waiting for its WAL to reach disk (synchronous_commit off for
  // this transaction only): it is on every webhook's path, between the outbox's commit and the
  // send, and a flush there adds the disk's fsync, and its stalls, to every delivery. Losing it
  // in a database crash is harmless: the delivery is leased again, at least once as ever, and
  // a later durable commit (an outcome) flushes the WAL before it, so none lands without it.
  return sql<LeasedRow[]>`
    with holdfast_async_commit as materialized (select set_config('synchronous_commit', 'off', true))
    select l.* from holdfast_async_commit, holdfast_lease_deliveries(
      p_owner => ${request.owner},
      p_limit => ${request.limit}::int,
      p_max => ${request.perEndpoint}::int,
      p_at => ${at}::timestamptz,
      p_lease_until => ${new Date(at.getTime() + request.leaseMs)}::timestamptz,
      p_paused => ${pgArray(request.paused)}::text[],
      p_share => ${request.endpointShare}::int,
      p_running_ids => ${pgArray(running.map(([id]) => id))}::text[],
      p_running_n => ${pgArray(running.map(([, n]) => n))}::int[],
      p_settled_ids => ${pgArray(settled.map((s) => s.id))}::text[],
      p_settled_counts => ${pgArray(settled.map((s) => s.attemptCount))}::int[],
      p_account_share => ${request.accountShare ?? null}::int,
      p_account_ids => ${pgArray(accounts.map(([id]) => id))}::text[],
      p_account_n => ${pgArray(accounts.map(([, n]) => n))}::int[]) l`;
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
    where id = any(${pgArray(ids)}::text[]) and lease_owner = ${owner}`;
}

/** How many release counters each endpoint has: a worker writes the one its id picked. */
export const RELEASE_STRIPES = 16;

/** A release counter for a worker (or a one-off release): any stripe is correct, one each avoids waits. */
export function releaseStripe(random: () => number): number {
  return Math.floor(random() * RELEASE_STRIPES) % RELEASE_STRIPES;
}

/** Gives a lease back unattempted (an error before the attempt), with its in-flight place. */
export async function releaseLease(
  sql: postgres.Sql,
  { owner, id, stripe }: { owner: string; id: string; stripe: number },
): Promise<void> {
  await sql`
    with released as (
      update holdfast_deliveries set lease_owner = null, lease_expires_at = null
      where id = ${id} and lease_owner = ${owner}
      returning endpoint_id
    )
    insert into holdfast_endpoint_releases (endpoint_id, stripe, released)
    select endpoint_id, ${stripe}, 1 from released
    on conflict (endpoint_id, stripe) do update set released = holdfast_endpoint_releases.released + 1`;
}

/**
 * Recounts in-flight places from the leases themselves for endpoints whose count is not zero: it
 * repairs a count that something outside the workers left off (a lease cleared by hand, a killed
 * worker's charge). The pacing rows are locked first (so no lease statement charges them
 * meanwhile), then counted in a second statement whose fresh snapshot sees every lease and
 * release committed before it, consistently (an outcome clears its leases and counts them
 * released in one statement): `in_flight` becomes the leases counted plus the releases counted,
 * and a release committed later lowers the count by exactly what it cleared. Cheap and rare
 * (every few seconds).
 */
export async function reconcileInFlight(sql: postgres.Sql): Promise<void> {
  await resumeWaitingLines(sql);
  await withStatementTimeout(sql, JOB_STATEMENT_TIMEOUT_MS, async (tx) => {
    const locked = await tx<{ endpoint_id: string }[]>`
      select p.endpoint_id from holdfast_endpoint_pacing p
      where p.in_flight <> coalesce(
        (select sum(r.released) from holdfast_endpoint_releases r where r.endpoint_id = p.endpoint_id), 0)
      order by p.endpoint_id limit 1000
      for update of p skip locked`;
    if (locked.length === 0) return 0;
    await tx`
      update holdfast_endpoint_pacing p set in_flight = (
        select count(*) from holdfast_deliveries d
        where d.endpoint_id = p.endpoint_id and d.lease_expires_at is not null
          and d.status in ('pending', 'failed'))
        + coalesce((select sum(r.released) from holdfast_endpoint_releases r where r.endpoint_id = p.endpoint_id), 0)
      where p.endpoint_id = any(${tx.array(locked.map((row) => row.endpoint_id))}::text[])`;
    return locked.length;
  });
}

/**
 * Makes due the head of every line of an ordered endpoint that waits with nothing ahead of it:
 * a delivery created behind one that finished while its creating statement ran, after the
 * finishing outcome's trigger looked for the next one (it could not see it yet). Each line is
 * visited once, by a skip scan of `holdfast_deliveries_ordered` (one probe per line, never per
 * delivery waiting); part of {@link reconcileInFlight}, so every worker runs it every few seconds,
 * never two at once in one worker, each statement cut at {@link JOB_STATEMENT_TIMEOUT_MS}.
 */
export async function resumeWaitingLines(sql: postgres.Sql): Promise<number> {
  return withStatementTimeout(sql, JOB_STATEMENT_TIMEOUT_MS, async (tx) => {
    const rows = await tx`
    with recursive line as (
      (select x.endpoint_id, x.ordering_key from holdfast_deliveries x
       where x.ordering_key is not null and x.status in ('pending', 'failed')
       order by x.endpoint_id, x.ordering_key limit 1)
      union all
      select n.endpoint_id, n.ordering_key from line l cross join lateral (
        select x.endpoint_id, x.ordering_key from holdfast_deliveries x
        where x.ordering_key is not null and x.status in ('pending', 'failed')
          and (x.endpoint_id, x.ordering_key) > (l.endpoint_id, l.ordering_key)
        order by x.endpoint_id, x.ordering_key limit 1) n
    )
    update holdfast_deliveries d set next_attempt_at = d.created_at
    from line l cross join lateral (
      select x.id from holdfast_deliveries x
      where x.endpoint_id = l.endpoint_id and x.ordering_key = l.ordering_key
        and x.status in ('pending', 'failed')
      order by x.ordering_pos limit 1) head
    where d.id = head.id and d.next_attempt_at is null
    returning d.id`;
    return rows.length;
  });
}
