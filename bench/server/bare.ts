// The baseline of bench/server: bare Hono running the statements the reference server runs for
// GET /v1/orders and POST /v1/orders (checked with log_statement=all), on the same driver, with
// none of the stack around them: no authentication, rate limit, validation, request ids,
// problem+json, cursor signing, row mapping or idempotency logic. Run by run.ts in its own
// process. BENCH_DRIVER picks the driver: `pg` (node-postgres, the reference server's) or
// `postgres` (postgres.js); each statement is prepared once per connection on either, as the
// server's database adapters do.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { statementName } from '@holdfast/db';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pg from 'pg';
import postgres from 'postgres';
import { answerParent } from './child';

const url = new URL(process.env.DATABASE_URL ?? '');
url.searchParams.set('options', `-c search_path=${process.env.BENCH_SCHEMA}`);
const driver = process.env.BENCH_DRIVER ?? 'pg';

type Row = Record<string, unknown>;
/** One statement as text with `$n` values, run prepared on the chosen driver's pool of 10. */
type Query = (text: string, values: unknown[]) => Promise<Row[]>;
let query: Query;
/** The list's statement in a transaction under the list timeout, as the server runs a list. */
let list: (values: unknown[]) => Promise<Row[]>;
let end: () => Promise<void>;
if (driver === 'pg') {
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10 });
  const run = async (client: pg.Pool | pg.PoolClient, text: string, values: unknown[]) =>
    (await client.query({ name: statementName(text), text, values })).rows;
  query = (text, values) => run(pool, text, values);
  list = async (values) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await run(client, LIST_TIMEOUT, [2000]);
      const rows = await run(client, LIST, values);
      await client.query('commit');
      return rows;
    } finally {
      client.release();
    }
  };
  end = () => pool.end();
} else if (driver === 'postgres') {
  const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });
  query = async (text, values) => [...(await sql.unsafe(text, values as never[], { prepare: true }))];
  list = async (values) => {
    const out: Row[] = [];
    await sql.begin(async (tx) => {
      const [, rows] = await Promise.all([
        tx.unsafe(LIST_TIMEOUT, [2000], { prepare: true }).execute(),
        tx.unsafe(LIST, values as never[], { prepare: true }),
      ]);
      out.push(...rows);
    });
    return out;
  };
  end = () => sql.end();
} else {
  throw new Error(`BENCH_DRIVER must be pg or postgres, not ${driver}`);
}

const account = process.env.BENCH_ACCOUNT ?? '';
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

// A list runs in a transaction whose statements are cut at the list timeout (the server's
// withListTimeout), then the keyset query with its helper columns.
const LIST_TIMEOUT = `
        select set_config('statement_timeout',
          (case when t.ms = 0 then $1::int else least(t.ms, $1::int) end)::text,
          true)
        from (select (extract(epoch from current_setting('statement_timeout')::interval) * 1000)::int as ms) t`;
const LIST = `
    select *, ("created_at")::text as "_hf_key_0", "created_at" as "_hf_sort_0", ("id")::text as "_hf_key_1",
           "id" as "_hf_sort_1"
    from holdfast_orders where (account_id = $1)
    order by "_hf_sort_0" desc nulls last, "_hf_sort_1" desc nulls last limit $2`;

// One statement, as the reference server sends it (@holdfast/idempotency's idempotentStatement
// around the order's writes and @holdfast/webhook-delivery's eventWrites): the key's row written
// already answered, the order, the outbox. Its text is the server's, byte for byte.
const CREATE = `with holdfast_claim as (insert into holdfast_idempotency_keys as k
    (account, key, fingerprint, token, locked_until, created_at, expires_at,
     response_status, response_headers, response_body)
  values ($16::text, $17::text, $18::text, null, $19::timestamptz, $19::timestamptz,
          $20::timestamptz, $21::int, $22::text::jsonb, decode($23::text, 'hex'))
  on conflict (account, key) do update set
    fingerprint = excluded.fingerprint, token = null, locked_until = excluded.locked_until,
    created_at = excluded.created_at, expires_at = excluded.expires_at,
    response_status = excluded.response_status, response_headers = excluded.response_headers,
    response_body = excluded.response_body
  where k.expires_at <= $19::timestamptz or (k.response_status is null and k.locked_until <= $19::timestamptz)
  returning 1), holdfast_order as (
  insert into holdfast_orders
    (id, account_id, status, currency, total, description, metadata, version, created_at, updated_at)
  select $1::text, $2::text, 'pending', $3::text, $4::bigint, $5::text, $6::text::jsonb, 1, $7::timestamptz, $7::timestamptz
  where exists (select from holdfast_claim)
),
holdfast_event_seq as (
  insert into holdfast_resource_sequences (resource_id, sequence)
  select $8::text, 1 where exists (select from holdfast_claim)
  on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
  returning sequence
),
holdfast_event as (
  insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
  select $9::text, $10::text, $11::text, $8::text, s.sequence,
         $12::text || s.sequence::text || $13::text, $14::timestamptz
  from holdfast_event_seq s
  returning id, payload
),
holdfast_event_fan as (
  insert into holdfast_deliveries
    (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at,
     ordering_key, ordering_pos)
  select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $10::text, ev.id, e.id, $11::text,
         'pending',
         case when e.ordering <> 'per-resource' then $14::timestamptz
              when exists (
                select 1 from holdfast_deliveries x
                where x.endpoint_id = e.id and x.ordering_key = $8::text and x.status in ('pending', 'failed')
                for key share) then null
              else $14::timestamptz end,
         $14::timestamptz, $14::timestamptz,
         case when e.ordering = 'per-resource' then $8::text end,
         case when e.ordering = 'per-resource' then nextval('holdfast_delivery_order') end
  from holdfast_event ev, holdfast_webhook_endpoints e
  where e.account_id = $10::text and e.status = 'active' and e.deleted_at is null
    and (cardinality(e.event_types) = 0 or $11::text = any(e.event_types) or '*' = any(e.event_types))
    and (e.filter is null or ($15::boolean and holdfast_filter_match(e.filter, ev.payload::jsonb)))
  returning pg_notify(left('holdfast_due.' || current_schema(), 63), '')
)
select count(*)::int as claimed from holdfast_claim`;

const INSERT_ONLY = `
    insert into holdfast_orders (id, account_id, status, currency, total, description, metadata, created_at, updated_at)
    values ($1, $2, 'pending', $3, $4, $5, '{}'::jsonb, $6, $6)
    returning *`;

const app = new Hono();

app.get('/v1/orders', async (c) => {
  const rows = await list([account, 21]);
  return c.json({ data: rows.slice(0, 20), pageInfo: { nextCursor: null, hasMore: rows.length > 20 } });
});

app.post('/v1/orders', async (c) => {
  const body = await c.req.json<{ currency: string; total: number; description?: string }>();
  const key = c.req.header('idempotency-key') ?? randomUUID();
  const now = new Date();
  const expires = new Date(now.getTime() + 86_400_000);
  const fingerprint = createHash('sha256').update(key).digest('hex');
  // The row is built here, so the answer is known before anything is written.
  const order = {
    id: id('ord'),
    livemode: false,
    status: 'pending',
    currency: body.currency,
    total: body.total,
    amountRefunded: 0,
    description: body.description ?? null,
    metadata: {},
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  const answer = JSON.stringify(order);
  const eventId = id('evt');
  const text = JSON.stringify({
    id: eventId,
    type: 'order.created',
    createdAt: now.toISOString(),
    sequence: 0,
    data: { object: order },
  });
  const at = text.indexOf('"sequence":0') + '"sequence":'.length;
  const headers = JSON.stringify({
    location: `/v1/orders/${order.id}`,
    etag: '"1"',
    'content-type': 'application/json',
  });
  const [row] = await query(CREATE, [
    order.id,
    account,
    order.currency,
    order.total,
    order.description,
    '{}',
    order.createdAt,
    order.id,
    eventId,
    account,
    'order.created',
    text.slice(0, at),
    text.slice(at + 1),
    order.createdAt,
    true,
    account,
    key,
    fingerprint,
    order.createdAt,
    expires.toISOString(),
    201,
    headers,
    Buffer.from(answer).toString('hex'),
  ]);
  if (row?.claimed !== 1) throw new Error('replay: not measured here');
  return c.body(answer, 201, { 'content-type': 'application/json' });
});

// For reference only (not the baseline): the order insert alone, without the idempotency claim,
// the outbox statements and the stored answer, to show what those guarantees cost in the database.
app.post('/insert-only/v1/orders', async (c) => {
  const body = await c.req.json<{ currency: string; total: number; description?: string }>();
  const [order] = await query(INSERT_ONLY, [
    id('ord'),
    account,
    body.currency,
    body.total,
    body.description ?? null,
    new Date(),
  ]);
  return c.json(order, 201);
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.send?.({ url: `http://127.0.0.1:${info.port}` });
});
answerParent(() => new Promise<void>((resolve) => server.close(() => void end().then(resolve))));
