// Prisma 7 with @prisma/adapter-pg, served by Hono: every Holdfast package on Prisma's pool.

import { migrations as apiKeyMigrations, createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { type ApiKeyEnv, apiKeyAuth } from '@holdfast/api-keys/hono';
import { paginate } from '@holdfast/cursor-pagination';
import { listQuery } from '@holdfast/cursor-pagination/hono';
import { migrate } from '@holdfast/db/migrate';
import { fromPrisma, prismaTransaction } from '@holdfast/db/prisma';
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
import { PrismaPg } from '@prisma/adapter-pg';
import { Hono } from 'hono';
import { drain, keyring, OrderInput, orderIdOf, orderSort, ready, shopMigration, toOrder } from './common.js';
import { PrismaClient } from './generated/client.js';

const prisma = new PrismaClient({
  adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL ?? '' }),
});
const db = fromPrisma(prisma);
await migrate(db, [
  ...apiKeyMigrations(),
  ...idempotencyMigrations(),
  ...deliveryMigrations(),
  ...inboxMigrations(),
  shopMigration,
]);

const store = dbApiKeyStore(db);
const transaction = prismaTransaction(prisma);

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
    const row = await tx.order.create({
      data: {
        id: `ord_${crypto.randomUUID()}`,
        account,
        item: parsed.data.item,
        quantity: parsed.data.quantity,
      },
    });
    const order = {
      id: row.id,
      item: row.item,
      quantity: row.quantity,
      createdAt: row.createdAt.toISOString(),
    };
    await enqueueEvent(txDb, {
      account,
      type: 'order.created',
      resourceId: order.id,
      object: order,
    });
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

// No listener: Prisma has no LISTEN, so the worker polls.
const worker = createDeliveryWorker({
  db,
  allowPrivateDestinations: true,
  schedule: parseRetrySchedule('1s,2s,5s'),
  pollMs: 250,
  onError: (error) => console.error('delivery worker:', error),
});
worker.start();
const inboxLoop = drain(() =>
  inbox.process(transaction, {
    types: ['order.created'],
    handle: async (entry, _tx, txDb) => {
      await txDb.query('insert into received_orders (webhook_id, order_id) values ($1, $2)', [
        entry.webhookId,
        orderIdOf(entry.payload),
      ]);
    },
  }),
);

ready(url, key, async () => {
  await worker.stop();
  await inboxLoop.stop();
  server.close();
  await prisma.$disconnect();
});
