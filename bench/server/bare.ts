// The baseline of bench/server: bare Hono + postgres.js running the statements the reference
// server runs for GET /v1/orders and POST /v1/orders (checked with log_statement=all), with
// none of the stack around them: no authentication, rate limit, validation, request ids,
// problem+json, cursor signing, row mapping or idempotency logic. Run by run.ts in its own process.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';

const url = new URL(process.env.DATABASE_URL ?? '');
url.searchParams.set('options', `-c search_path=${process.env.BENCH_SCHEMA}`);
const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });
const account = process.env.BENCH_ACCOUNT ?? '';
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

const app = new Hono();

app.get('/v1/orders', async (c) => {
  const rows = await sql`
    select *, ("created_at")::text as "_hf_key_0", "created_at" as "_hf_sort_0", ("id")::text as "_hf_key_1",
           "id" as "_hf_sort_1"
    from holdfast_orders where (account_id = ${account})
    order by "_hf_sort_0" desc nulls last, "_hf_sort_1" desc nulls last limit ${21}`;
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
  // One statement, as the reference server sends it (@holdfast/idempotency's
  // idempotentStatement around the order's writes and @holdfast/webhook-delivery's
  // eventWrites): the key's row written already answered, the order, the outbox.
  const [row] = await sql`
    with holdfast_claim as (
      insert into holdfast_idempotency_keys
        (account, key, fingerprint, token, locked_until, created_at, expires_at,
         response_status, response_headers, response_body)
      values (${account}, ${key}, ${fingerprint}, null, ${now}, ${now}, ${expires}, ${201},
              ${sql.json({ location: `/v1/orders/${order.id}`, etag: '"1"', 'content-type': 'application/json' })},
              ${Buffer.from(answer)})
      on conflict (account, key) do nothing
      returning 1
    ),
    holdfast_order as (
      insert into holdfast_orders
        (id, account_id, status, currency, total, description, metadata, version, created_at, updated_at)
      select ${order.id}::text, ${account}::text, 'pending', ${order.currency}::text, ${order.total}::bigint,
             ${order.description}::text, ${sql.json({})}::jsonb, 1, ${now}::timestamptz, ${now}::timestamptz
      where exists (select from holdfast_claim)
    ),
    holdfast_event_seq as (
      insert into holdfast_resource_sequences (resource_id, sequence)
      select ${order.id}::text, 1 where exists (select from holdfast_claim)
      on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
      returning sequence
    ),
    holdfast_event as (
      insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
      select ${eventId}, ${account}, 'order.created', ${order.id}, s.sequence,
             ${text.slice(0, at)} || s.sequence::text || ${text.slice(at + 1)}, ${now}
      from holdfast_event_seq s
      returning id
    ),
    holdfast_event_fan as (
      insert into holdfast_deliveries
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
      select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${account}, ev.id, e.id, 'order.created',
             'pending', ${now}, ${now}, ${now}
      from holdfast_event ev, holdfast_webhook_endpoints e
      where e.account_id = ${account} and e.status = 'active' and e.deleted_at is null
        and (cardinality(e.event_types) = 0 or 'order.created' = any(e.event_types) or '*' = any(e.event_types))
    )
    select count(*)::int as claimed from holdfast_claim`;
  if (row?.claimed !== 1) throw new Error('replay: not measured here');
  return c.body(answer, 201, { 'content-type': 'application/json' });
});

// For reference only (not the baseline): the order insert alone, without the idempotency claim,
// the outbox statements and the stored answer, to show what those guarantees cost in the database.
app.post('/insert-only/v1/orders', async (c) => {
  const body = await c.req.json<{ currency: string; total: number; description?: string }>();
  const now = new Date();
  const [order] = await sql`
    insert into holdfast_orders (id, account_id, status, currency, total, description, metadata, created_at, updated_at)
    values (${id('ord')}, ${account}, 'pending', ${body.currency}, ${body.total}, ${body.description ?? null},
            ${sql.json({})}, ${now}, ${now})
    returning *`;
  return c.json(order, 201);
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.send?.({ url: `http://127.0.0.1:${info.port}` });
});
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  if (message === 'stop') server.close(() => void sql.end().then(() => process.exit(0)));
});
