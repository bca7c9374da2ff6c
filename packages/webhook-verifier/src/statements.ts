import { qualify } from '@holdfast/db/migrate';

/** The statements by name; their values are described where they are written. */
export type Statements = Record<
  | 'claimDedup'
  | 'releaseDedup'
  | 'purgeDedup'
  | 'advanceVersion'
  | 'enqueue'
  | 'existing'
  | 'lease'
  | 'done'
  | 'failed'
  | 'createPartitions'
  | 'dropPartitions',
  string
>;

/**
 * Every statement of the receiver toolkit's tables, written once as text with `$n` values and
 * sent as it is through any driver's `Db`. Values are cast in SQL (times as ISO text, bytes as
 * hex, JSON as text), so each driver sends and reads the same types. `schema` qualifies the
 * table names; without it they resolve through the connection's `search_path`.
 */
export function statements(schema?: string): Statements {
  const name = qualify(schema);
  const dedup = name('holdfast_webhook_dedup');
  const versions = name('holdfast_webhook_versions');
  const inbox = name('holdfast_webhook_inbox');
  // An expired record is claimed again; a live one makes the insert return nothing.
  const claimDedup = `insert into ${dedup} as d (key, expires_at)
    values ($1::text, $2::timestamptz)
    on conflict (key) do update set expires_at = excluded.expires_at, created_at = now()
      where d.expires_at <= $3::timestamptz
    returning key`;
  return {
    /** $1 key, $2 expires at, $3 now. */
    claimDedup: claimDedup,
    /** $1 key. */
    releaseDedup: `delete from ${dedup} where key = $1::text`,
    /** $1 now: how many went, as `n`. */
    purgeDedup: `with gone as (delete from ${dedup} where expires_at <= $1::timestamptz returning 1)
      select count(*)::int as n from gone`,
    /** $1 resource, $2 version. */
    advanceVersion: `insert into ${versions} as v (resource, version) values ($1::text, $2::bigint)
      on conflict (resource) do update set version = excluded.version, updated_at = now()
        where v.version < excluded.version
      returning resource`,
    /**
     * $1..$3 as `claimDedup`, then $4 id, $5 scope, $6 tenant, $7 webhook id, $8 type, $9 the
     * payload as a one-element JSON array (a JSON null given alone would be SQL NULL), $10 the
     * body in hex. The inbox is partitioned by time, so no unique index can hold (scope, webhook
     * id): the claim serializes enqueues of one id, and an entry still kept after its claim
     * expired is found in the partitions (an index probe each).
     */
    enqueue: `with claim as (${claimDedup})
      insert into ${inbox} (id, scope, tenant, webhook_id, type, payload, body)
      select $4::text, $5::text, $6::text, $7::text, $8::text, ($9::text::jsonb -> 0), decode($10::text, 'hex')
      from claim
      where not exists (select 1 from ${inbox} i where i.scope = $5::text and i.webhook_id = $7::text)
      returning id`,
    /** $1 scope, $2 webhook id. */
    existing: `select id from ${inbox} where scope = $1::text and webhook_id = $2::text`,
    /** $1 how many; `received_at` as ISO text, so the marks find the entry's partition alone. */
    lease: `select id, scope, tenant, webhook_id, type, payload, attempts, to_json(received_at) #>> '{}' as received_at from ${inbox}
      where status = 'pending' and (next_attempt_at is null or next_attempt_at <= now())
      order by received_at, id
      limit $1::int
      for update skip locked`,
    /** $1 id, $2 status, $3 resource, $4 received at. */
    done: `update ${inbox}
      set status = $2::text, resource = $3::text, attempts = attempts + 1, next_attempt_at = null,
        processed_at = date_trunc('milliseconds', now())
      where id = $1::text and received_at = $4::timestamptz`,
    /** $1 id, $2 attempts (one more than when leased: the entry must still be as it was), $3 reason, $4 set aside, $5 seconds to the next attempt, $6 received at. */
    failed: `update ${inbox}
      set attempts = $2::int, last_error = $3::text,
        status = case when $4::boolean then 'failed' else 'pending' end,
        next_attempt_at = case when $4::boolean then null else now() + make_interval(secs => $5::double precision) end,
        processed_at = case when $4::boolean then date_trunc('milliseconds', now()) end
      where id = $1::text and received_at = $6::timestamptz and status = 'pending' and attempts = $2::int - 1`,
    /**
     * $1 from, $2 to (null: the database's now for both), $3 days a partition spans: the names
     * of the partitions made, as `name`.
     */
    createPartitions: `select name from ${name('holdfast_webhook_inbox_create_partitions')}(
        coalesce($1::timestamptz, now()), coalesce($2::timestamptz, now()), $3::int) as name`,
    /** $1 the instant partitions wholly before go: `name`, and `dropped` false when one was kept. */
    dropPartitions: `select name, dropped from ${name('holdfast_webhook_inbox_drop_partitions')}($1::timestamptz)`,
  };
}
