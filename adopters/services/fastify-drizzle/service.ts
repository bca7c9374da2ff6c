// Fastify 5 with Drizzle on node-postgres: every Holdfast package on the service's one pool.
import { migrations as apiKeyMigrations, createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { apiKeyAuth } from '@holdfast/api-keys/fastify';
import { paginate } from '@holdfast/cursor-pagination';
import { listQuery } from '@holdfast/cursor-pagination/fastify';
import { drizzleTransaction, fromDrizzle } from '@holdfast/db/drizzle';
import { migrate } from '@holdfast/db/migrate';
import { pgListener } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
import { withIdempotency } from '@holdfast/idempotency/fastify';
import { fromZodError } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/fastify';
import { jsonBody, requestId } from '@holdfast/request-guards/fastify';
import {
  createDeliveryWorker,
  createEndpoint,
  migrations as deliveryMigrations,
  enqueueEvent,
  parseRetrySchedule,
} from '@holdfast/webhook-delivery';
import { rawBodies, webhookReceiver } from '@holdfast/webhook-verifier/fastify';
import { migrations as inboxMigrations, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import Fastify from 'fastify';
import pg from 'pg';
import { drain, keyring, OrderInput, orderIdOf, orderSort, ready, shopMigration, toOrder } from './common.js';

const orders = pgTable('orders', {
  id: text('id').primaryKey(),
  account: text('account').notNull(),
  item: text('item').notNull(),
  quantity: integer('quantity').notNull(),
  createdAt: timestamp('created_at', { precision: 3, withTimezone: true }).notNull().defaultNow(),
});
const receivedOrders = pgTable('received_orders', {
  webhookId: text('webhook_id').notNull(),
  orderId: text('order_id').notNull(),
});

// The packages' tables in a schema of their own, apart from the service's.
const schema = 'holdfast';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '' });
pool.on('error', () => {}); // an idle client whose backend died: the pool drops it
const db = drizzle({ client: pool });
const hf = fromDrizzle(db, sql);
await migrate(hf, [
  ...apiKeyMigrations({ schema }),
  ...idempotencyMigrations({ schema }),
  ...deliveryMigrations({ schema }),
  ...inboxMigrations({ schema }),
  shopMigration,
]);

const store = dbApiKeyStore(hf, { schema });
const transaction = drizzleTransaction(db, sql);

let secret = '';
const inbox = postgresInbox(hf, { schema });

const app = Fastify();
app.addHook('onRequest', requestId());
app.setErrorHandler(onProblem());
app.setNotFoundHandler(notFoundProblem(app));
await app.register(async (hooks) => {
  rawBodies(hooks);
  hooks.post(
    '/hooks/orders',
    webhookReceiver({
      secrets: () => [secret],
      onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }),
    }),
  );
});
await app.register(
  async (v1) => {
    v1.addHook('onRequest', apiKeyAuth({ store }));
    jsonBody(v1);
    v1.post('/orders', async (request, reply) => {
      const parsed = OrderInput.safeParse(request.body);
      if (!parsed.success) throw fromZodError(parsed.error);
      const account = request.principal?.account ?? '';
      const answer = await withIdempotency(
        request,
        { transaction, account, required: true, schema },
        async (tx, txDb) => {
          const [row] = await tx
            .insert(orders)
            .values({
              id: `ord_${crypto.randomUUID()}`,
              account,
              item: parsed.data.item,
              quantity: parsed.data.quantity,
            })
            .returning();
          if (row === undefined) throw new Error('insert returned no row');
          const order = {
            id: row.id,
            item: row.item,
            quantity: row.quantity,
            createdAt: row.createdAt.toISOString(),
          };
          await enqueueEvent(
            txDb,
            {
              account,
              type: 'order.created',
              resourceId: order.id,
              object: order,
            },
            { schema },
          );
          return { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order };
        },
      );
      return reply.send(answer);
    });
    v1.get('/orders', async (request) => {
      const account = request.principal?.account ?? '';
      const binding = { account, resource: 'orders' };
      const query = await listQuery(request, { allowlist: orderSort, keyring, binding });
      return paginate(hf, {
        from: 'orders',
        where: { text: 'account = $1', values: [account] },
        allowlist: orderSort,
        binding,
        keyring,
        map: toOrder,
        ...query.params,
      });
    });
  },
  { prefix: '/v1' },
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });

const key = await createKey(store, 'acct_adopter', ['*'], 'live');
const registered = await createEndpoint(
  hf,
  { account: 'acct_adopter:live', url: `${url}/hooks/orders`, eventTypes: ['order.created'] },
  { allowPrivateDestinations: true, schema },
);
secret = registered.secret;

const worker = createDeliveryWorker({
  db: hf,
  listener: pgListener(pool),
  schema,
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
      await tx
        .insert(receivedOrders)
        .values({ webhookId: entry.webhookId, orderId: orderIdOf(entry.payload) });
    },
  }),
);

ready(url, key, async () => {
  await worker.stop();
  await inboxLoop.stop();
  await app.close();
  await pool.end();
});
