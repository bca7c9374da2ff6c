// The baseline of bench/server: bare Hono + postgres.js running the statements the reference
// server runs for GET /v1/orders and POST /v1/orders (captured with log_statement=all), with
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
  const token = randomUUID();
  const now = new Date();
  const lockedUntil = new Date(now.getTime() + 60_000);
  const expires = new Date(now.getTime() + 86_400_000);
  const fingerprint = createHash('sha256').update(key).digest('hex');
  await sql`
    with claimed as (
      insert into holdfast_idempotency_keys as k
        (account, key, fingerprint, token, locked_until, created_at, expires_at)
      values (${account}, ${key}, ${fingerprint}, ${token}, ${lockedUntil}, ${now}, ${expires})
      on conflict (account, key) do update set
        fingerprint = excluded.fingerprint, token = excluded.token,
        locked_until = excluded.locked_until, created_at = excluded.created_at,
        expires_at = excluded.expires_at, response_status = null,
        response_headers = null, response_body = null
      where k.expires_at <= ${now}
         or (k.response_status is null and k.locked_until <= ${now})
      returning true as claimed, k.fingerprint, k.locked_until, k.response_status,
                k.response_headers, k.response_body
    )
    select * from claimed
    union all
    select false, fingerprint, locked_until, response_status, response_headers, response_body
    from holdfast_idempotency_keys
    where account = ${account} and key = ${key} and not exists (select from claimed)`;
  let stored: Promise<unknown> | undefined;
  const row = await sql.begin(async (tx) => {
    const [order] = await tx`
      insert into holdfast_orders (id, account_id, status, currency, total, description, metadata, created_at, updated_at)
      values (${id('ord')}, ${account}, 'pending', ${body.currency}, ${body.total}, ${body.description ?? null},
              ${tx.json({})}, ${now}, ${now})
      returning *`;
    if (!order) throw new Error('no row');
    // The outbox, as @holdfast/webhook-delivery's enqueueEvent sends it: one statement (the
    // resource's sequence, the event carrying it, the fan-out).
    const eventId = id('evt');
    const text = JSON.stringify({
      id: eventId,
      type: 'order.created',
      createdAt: now.toISOString(),
      sequence: 0,
      data: { object: order },
    });
    const at = text.indexOf('"sequence":0') + '"sequence":'.length;
    await tx`
      with seq as (
        insert into holdfast_resource_sequences (resource_id, sequence) values (${order.id}, 1)
        on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
        returning sequence
      ),
      ev as (
        insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
        select ${eventId}, ${account}, 'order.created', ${order.id}, seq.sequence,
               ${text.slice(0, at)} || seq.sequence::text || ${text.slice(at + 1)}, ${now}
        from seq
        returning id
      ),
      fan as (
        insert into holdfast_deliveries
          (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
        select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${account}, ev.id, e.id, 'order.created',
               'pending', ${now}, ${now}, ${now}
        from ev, holdfast_webhook_endpoints e
        where e.account_id = ${account} and e.status = 'active' and e.deleted_at is null
          and (cardinality(e.event_types) = 0 or 'order.created' = any(e.event_types) or '*' = any(e.event_types))
      )
      select sequence from seq`;
    // Sent without waiting, so COMMIT follows it in the same round trip, as the idempotency
    // package does.
    stored = tx`
      with stored as (
        update holdfast_idempotency_keys
        set response_status = ${201}, response_headers = ${tx.json({ location: `/v1/orders/${order.id}` })},
            response_body = ${Buffer.from(JSON.stringify(order))}, expires_at = ${expires}, token = null
        where account = ${account} and key = ${key} and token = ${token}
          and response_status is null
        returning 1) select 1 / count(*) as owned from stored`.execute();
    stored.catch(() => {});
    return order;
  });
  await stored;
  return c.json(row, 201);
});

// For reference only, the proposal in the README ("what would reach 0.6x"): the same statements
// with one commit, all pipelined in one transaction: the claim inside the business transaction
// (a concurrent duplicate waits on the key's row, then sees the stored answer), the order
// insert and the outbox statement sent together (the event's object built from the values
// inserted), the stored answer riding with COMMIT.
app.post('/one-commit/v1/orders', async (c) => {
  const body = await c.req.json<{ currency: string; total: number; description?: string }>();
  const key = c.req.header('idempotency-key') ?? randomUUID();
  const token = randomUUID();
  const now = new Date();
  const expires = new Date(now.getTime() + 86_400_000);
  const fingerprint = createHash('sha256').update(key).digest('hex');
  const order = {
    id: id('ord'),
    status: 'pending',
    currency: body.currency,
    total: body.total,
    amountRefunded: 0,
    description: body.description ?? null,
    metadata: {},
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  const eventId = id('evt');
  const text = JSON.stringify({
    id: eventId,
    type: 'order.created',
    createdAt: now.toISOString(),
    sequence: 0,
    data: { object: order },
  });
  const at = text.indexOf('"sequence":0') + '"sequence":'.length;
  let stored: Promise<unknown> | undefined;
  await sql.begin(async (tx) => {
    const claim = tx`
      insert into holdfast_idempotency_keys as k
        (account, key, fingerprint, token, locked_until, created_at, expires_at)
      values (${account}, ${key}, ${fingerprint}, ${token}, ${now}, ${now}, ${expires})
      on conflict (account, key) do nothing
      returning true as claimed`.execute();
    const insert = tx`
      insert into holdfast_orders (id, account_id, status, currency, total, description, metadata, created_at, updated_at)
      values (${order.id}, ${account}, 'pending', ${body.currency}, ${body.total}, ${body.description ?? null},
              ${tx.json({})}, ${now}, ${now})
      returning *`.execute();
    const outbox = tx`
      with seq as (
        insert into holdfast_resource_sequences (resource_id, sequence) values (${order.id}, 1)
        on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
        returning sequence
      ),
      ev as (
        insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
        select ${eventId}, ${account}, 'order.created', ${order.id}, seq.sequence,
               ${text.slice(0, at)} || seq.sequence::text || ${text.slice(at + 1)}, ${now}
        from seq returning id
      ),
      fan as (
        insert into holdfast_deliveries
          (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
        select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${account}, ev.id, e.id, 'order.created',
               'pending', ${now}, ${now}, ${now}
        from ev, holdfast_webhook_endpoints e
        where e.account_id = ${account} and e.status = 'active' and e.deleted_at is null
          and (cardinality(e.event_types) = 0 or 'order.created' = any(e.event_types) or '*' = any(e.event_types))
      )
      select sequence from seq`.execute();
    stored = tx`
      update holdfast_idempotency_keys
      set response_status = ${201}, response_headers = ${tx.json({ location: `/v1/orders/${order.id}` })},
          response_body = ${Buffer.from(JSON.stringify(order))}, token = null
      where account = ${account} and key = ${key} and token = ${token}`.execute();
    stored.catch(() => {});
    const [claimed] = await claim;
    if (!claimed) throw new Error('replay: not measured here');
    await Promise.all([insert, outbox]);
  });
  await stored;
  return c.json(order, 201);
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
