// Hono on @hono/node-server with stock postgres.js: every Holdfast package on one postgres.js pool.

import { migrations as apiKeyMigrations, createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { type ApiKeyEnv, apiKeyAuth } from '@holdfast/api-keys/hono';
import { paginate } from '@holdfast/cursor-pagination';
import { listQuery } from '@holdfast/cursor-pagination/hono';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresListener, postgresTransaction } from '@holdfast/db/postgres';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { fromZodError } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/hono';
import { jsonBody, requestId } from '@holdfast/request-guards/hono';
import {
  createDeliveryWorker,
  createEndpoint,
  migrations as deliveryMigrations,
  enqueueEvent,
  parseRetrySchedule,
} from '@holdfast/webhook-delivery';
import { webhookReceiver } from '@holdfast/webhook-verifier/hono';
import { migrations as inboxMigrations, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { drain, keyring, OrderInput, orderIdOf, orderSort, ready, shopMigration, toOrder } from './common.js';

const databaseUrl = process.env.DATABASE_URL ?? '';
// Migrations on a client of their own, as a deploy step would: the service's client below is
// fresh, so its first statements (the key, the endpoint) run on a connection that ran nothing.
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
await migrate(fromPostgres(admin), [
  ...apiKeyMigrations(),
  ...idempotencyMigrations(),
  ...deliveryMigrations(),
  ...inboxMigrations(),
  shopMigration,
]);
await admin.end();

const sql = postgres(databaseUrl, { onnotice: () => {} });
const db = fromPostgres(sql);
const store = dbApiKeyStore(db);
const transaction = postgresTransaction(sql);

let secret = '';
const inbox = postgresInbox(db);

const app = new Hono<ApiKeyEnv>();
app.use(requestId());
app.onError(onProblem());
app.notFound(notFoundProblem(app));
app.post(
  '/hooks/orders',
  webhookReceiver({ secrets: () => [secret], onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }) }),
);
app.use('/v1/*', apiKeyAuth({ store }));
app.use('/v1/*', jsonBody());
app.post('/v1/orders', async (c) => {
  const parsed = OrderInput.safeParse(c.get('jsonBody'));
  if (!parsed.success) throw fromZodError(parsed.error);
  const { account } = c.get('principal');
  return withIdempotency(c, { transaction, account, required: true }, async (tx, txDb) => {
    const [row] = await tx`insert into orders (id, account, item, quantity)
      values (${`ord_${crypto.randomUUID()}`}, ${account}, ${parsed.data.item}, ${parsed.data.quantity}) returning *`;
    const order = toOrder(row as Record<string, unknown>);
    await enqueueEvent(txDb, { account, type: 'order.created', resourceId: order.id, object: order });
    return { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order };
  });
});
app.get('/v1/orders', async (c) => {
  const { account } = c.get('principal');
  const binding = { account, resource: 'orders' };
  const query = await listQuery(c, { allowlist: orderSort, keyring, binding });
  return c.json(
    await paginate(db, {
      from: 'orders',
      where: { text: 'account = $1', values: [account] },
      allowlist: orderSort,
      binding,
      keyring,
      map: toOrder,
      ...query.params,
    }),
  );
});

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as { port: number };
const url = `http://127.0.0.1:${port}`;

const key = await createKey(store, 'acct_adopter', ['*'], 'live');
const registered = await createEndpoint(
  db,
  { account: 'acct_adopter:live', url: `${url}/hooks/orders`, eventTypes: ['order.created'] },
  { allowPrivateDestinations: true },
);
secret = registered.secret;

const worker = createDeliveryWorker({
  db,
  listener: postgresListener(sql),
  allowPrivateDestinations: true,
  schedule: parseRetrySchedule('1s,2s,5s'),
  pollMs: 250,
  onError: (error) => console.error('delivery worker:', error),
});
worker.start();
const inboxLoop = drain(() =>
  inbox.process(transaction, {
    types: ['order.created'],
    handle: async (entry, tx) => {
      await tx`insert into received_orders (webhook_id, order_id) values (${entry.webhookId}, ${orderIdOf(entry.payload)})`;
    },
  }),
);

ready(url, key, async () => {
  await worker.stop();
  await inboxLoop.stop();
  server.close();
  await sql.end();
});
