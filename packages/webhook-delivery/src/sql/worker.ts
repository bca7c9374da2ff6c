import type { Db } from '@holdfast/db';
import { qualify } from '@holdfast/db/migrate';
import { wakeChannelSql } from '../wake';

/**
 * Every statement the delivery worker, its periodic jobs, endpoint health and the queue gauges
 * send, each written once as text with `$n` values, built from the table names of one schema.
 * Values go as text, numbers or array literals cast in the statement (`$1::text[]`), and
 * timestamps come back as epoch milliseconds (`float8`), so every driver sends the same text and
 * reads the same JS types.
 */
export function workerStatements(schema?: string) {
  const q = qualify(schema);
  const deliveries = q('holdfast_deliveries');
  const endpoints = q('holdfast_webhook_endpoints');
  const pacing = q('holdfast_endpoint_pacing');
  const releases = q('holdfast_endpoint_releases');
  const queue = q('holdfast_delivery_queue');
  return {
    /**
     * The lease function (`migrations/013_turns_come.sql`) with named arguments; one round trip a round.
     * It commits without waiting for its WAL to reach disk (`synchronous_commit` off for this
     * transaction only): it is on every webhook's path, between the outbox's commit and the
     * send, and a flush there adds the disk's fsync, and its stalls, to every delivery. Losing it
     * in a database crash is harmless: the delivery is leased again, at least once as ever, and
     * a later durable commit (an outcome) flushes the WAL before it, so none lands without it.
     */
    lease: `
      with holdfast_async_commit as materialized (select set_config('synchronous_commit', 'off', true))
      select l.id, l.account_id, l.event_id, l.endpoint_id, l.event_type, l.attempt_count, l.retry_base, l.url, l.secret,
             l.previous_secret, (extract(epoch from l.previous_secret_expires_at) * 1000)::float8 as previous_secret_expires_ms,
             l.payload
      from holdfast_async_commit, ${q('holdfast_lease_deliveries')}(
        p_owner => $1::text, p_limit => $2::int, p_max => $3::int, p_at => $4::timestamptz,
        p_lease_until => $5::timestamptz, p_paused => $6::text[], p_share => $7::int,
        p_running_ids => $8::text[], p_running_n => $9::int[], p_settled_ids => $10::text[],
        p_settled_counts => $11::int[], p_account_share => $12::int, p_account_ids => $13::text[],
        p_account_n => $14::int[]) l`,
    /**
     * $1 until, $2 ids, $3 owner. Leases live on the queue rows (migration 009), locked in id
     * order and nothing locked after them.
     */
    renew: `
      update ${queue} q set lease_expires_at = $1::timestamptz
      from (
        select delivery_id from ${queue} where delivery_id = any($2::text[]) and lease_owner = $3::text
        order by delivery_id for update
      ) mine
      where q.delivery_id = mine.delivery_id and q.lease_owner = $3::text`,
    /**
     * $1 id, $2 owner, $3 stripe: the lease and its in-flight place, in one statement; the
     * delivery is leasable again, so its endpoint's turn comes no later than its due time (a
     * `for key share` check or a wake, migration 009: never a wait on another writer).
     */
    release: `
      with released as (
        update ${queue} set lease_owner = null, lease_expires_at = null
        where delivery_id = $1::text and lease_owner = $2::text
        returning endpoint_id, next_attempt_at
      ),
      woken as (
        select ${q('holdfast_queue_wake')}(r.endpoint_id, r.next_attempt_at) from released r
        where r.next_attempt_at is not null
      )
      insert into ${releases} (endpoint_id, stripe, released)
      select endpoint_id, $3::int, 1 from released, (select count(*) from woken) w
      on conflict (endpoint_id, stripe) do update set released = ${releases}.released + 1`,
    /**
     * Recounts in-flight places: one statement whose two steps each see a snapshot of their own
     * (a PL/pgSQL block takes one per statement), so the count, taken after the pacing rows are
     * locked, sees every lease and release committed before the lock. Its commit does not wait
     * for the WAL flush: the next run repairs what a crash loses, and every lease skips the
     * locked pacing rows meanwhile, so they must not stay locked through a disk's fsync stall.
     */
    reconcile: `
      do $reconcile$
      declare locked text[];
      begin
        perform set_config('synchronous_commit', 'off', true);
        select array_agg(l.endpoint_id) into locked from (
          select p.endpoint_id from ${pacing} p
          where p.in_flight <> coalesce(
            (select sum(r.released) from ${releases} r where r.endpoint_id = p.endpoint_id), 0)
          order by p.endpoint_id limit 1000
          for update of p skip locked) l;
        if locked is null then return; end if;
        update ${pacing} p set in_flight = (
          select count(*) from ${queue} d
          where d.endpoint_id = p.endpoint_id and d.lease_expires_at is not null)
          + coalesce((select sum(r.released) from ${releases} r where r.endpoint_id = p.endpoint_id), 0)
        where p.endpoint_id = any(locked);
      end
      $reconcile$`,
    /**
     * $1 limit: moves later the turns of endpoints with nothing to lease now
     * (`migrations/015_settle_idle.sql`), answers how many. Its commit does not wait for the
     * WAL flush: a turn a crash puts back is visited for nothing until the next run moves it.
     */
    settle: `
      with holdfast_async_commit as materialized (select set_config('synchronous_commit', 'off', true))
      select ${q('holdfast_queue_settle')}(now(), $1::int) as moved from holdfast_async_commit`,
    /** Makes due each waiting line's head (see `resumeWaitingLines`); answers how many. */
    resumeLines: `select ${q('holdfast_queue_resume_lines')}() as resumed`,
    /** $1 endpoint ids: those deleted or disabled. */
    goneEndpoints: `
      select id from ${endpoints}
      where id = any($1::text[]) and (status <> 'active' or deleted_at is not null)`,
    /** The outcome function (`migrations/010_pacing.sql`), one array per column of the batch. */
    writeOutcomes: `
      select 1 as written from ${q('holdfast_write_outcomes')}(
        p_owner => $1::text, p_stripe => $2::int, p_max => $3::int, p_ids => $4::text[],
        p_attempt_ids => $5::text[], p_account_ids => $6::text[], p_endpoint_ids => $7::text[],
        p_statuses => $8::int[], p_errors => $9::text[], p_latencies => $10::int[],
        p_prefixes => $11::text[], p_finished => $12::timestamptz[], p_next_statuses => $13::text[],
        p_next_attempts => $14::timestamptz[], p_congested => $15::bool[], p_fast => $16::bool[],
        p_pause_until => $17::timestamptz[])`,
    /**
     * $1 ceiling, $2 endpoint ids, $3 fast successes of each: the additive increase
     * (`migrations/010_pacing.sql`), after the outcomes commit; answers the endpoints whose
     * pacing row was locked (passed over, never waited for). It commits without waiting for the
     * flush, so the rows it locks, which lease rounds pass over while locked, are held for the
     * statement only; a lost increase leaves a limit a little lower, nothing else.
     */
    paceOutcomes: `
      with holdfast_async_commit as materialized (select set_config('synchronous_commit', 'off', true))
      select p.endpoint_id from holdfast_async_commit,
        ${q('holdfast_pace_outcomes')}(p_max => $1::int, p_endpoint_ids => $2::text[], p_fast => $3::int[]) p`,
    /** $1 id, $2 account, $3 type, $4 endpoint, $5 message, $6 disable at, $7 created at. */
    notification: `
      insert into ${q('holdfast_notifications')} (id, account_id, type, endpoint_id, message, disable_at, created_at)
      values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $7::timestamptz)
      returning id, type, message, endpoint_id,
        to_json(disable_at)#>>'{}' as disable_at, to_json(created_at)#>>'{}' as created_at`,
    /**
     * $1 endpoint, $2 at, $3 reason, $4 notification id, $5 account, $6 message: disables an
     * active endpoint and writes its notification in the same statement (never one without
     * the other, and a reader that sees the endpoint disabled sees the notification).
     */
    disable: `
      with disabled as (
        update ${endpoints} set status = 'disabled', disabled_reason = $3::text, updated_at = $2::timestamptz
        where id = $1::text and status = 'active' returning id)
      insert into ${q('holdfast_notifications')} (id, account_id, type, endpoint_id, message, disable_at, created_at)
      select $4::text, $5::text, 'webhook_endpoint.disabled', d.id, $6::text, null, $2::timestamptz
      from disabled d
      returning id, type, message, endpoint_id,
        to_json(disable_at)#>>'{}' as disable_at, to_json(created_at)#>>'{}' as created_at`,
    /**
     * $1 endpoint, $2 at: starts (or keeps) an active endpoint's failure streak. A streak already
     * started is only read: rewriting the row after every failing batch made a new row version
     * (and WAL) each time for nothing. A streak another worker starts meanwhile reads as `$2`.
     */
    failing: `
      with streak as materialized (
        select failing_since, disable_warned_at from ${endpoints} where id = $1::text and status = 'active'
      ),
      started as (
        update ${endpoints} set failing_since = $2::timestamptz
        where id = $1::text and status = 'active' and failing_since is null
          and exists (select 1 from streak where streak.failing_since is null)
        returning failing_since, disable_warned_at
      )
      select (extract(epoch from coalesce(s.failing_since, c.failing_since, $2::timestamptz)) * 1000)::float8
               as failing_since_ms,
             (extract(epoch from coalesce(s.disable_warned_at, c.disable_warned_at)) * 1000)::float8 as disable_warned_ms
      from streak c left join started s on true`,
    /** $1 endpoint, $2 at: the one warning before disabling. */
    warned: `
      update ${endpoints} set disable_warned_at = $2::timestamptz
      where id = $1::text and disable_warned_at is null returning id`,
    queueDepth: `
      select
        (select count(*)::int from ${queue} d join ${endpoints} e on e.id = d.endpoint_id
          where d.next_attempt_at <= now()
            and (d.lease_expires_at is null or d.lease_expires_at < now())
            and e.status = 'active' and e.deleted_at is null) as due,
        (select count(*)::int from ${queue} where lease_expires_at >= now()) as in_flight,
        (select count(*)::int from ${deliveries} where status = 'dead') as dead,
        (select extract(epoch from now() - min(d.next_attempt_at))::float8
          from ${queue} d join ${endpoints} e on e.id = d.endpoint_id
          where d.next_attempt_at <= now()
            and e.status = 'active' and e.deleted_at is null) as oldest`,
    throttled: `
      select endpoint_id, concurrency_limit::float8 as concurrency_limit from ${pacing}
      where concurrency_limit is not null and concurrency_max is not null and concurrency_limit < concurrency_max
      order by concurrency_limit / concurrency_max, endpoint_id
      limit 100`,
    /** The outbox's wake channel (`wake.ts`). */
    channel: `select ${wakeChannelSql(schema)} as channel`,
  };
}

/** The worker's statements, by name. */
export type WorkerStatements = ReturnType<typeof workerStatements>;

/** Where the worker's statements run: the database and the statements of its schema. */
export interface QueueDb {
  readonly db: Db;
  readonly sql: WorkerStatements;
}
