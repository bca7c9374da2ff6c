// Express 5 on node-postgres: every Holdfast package on the service's one pg pool.
import { migrations as apiKeyMigrations, createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { apiKeyAuth } from '@holdfast/api-keys/express';
import { paginate } from '@holdfast/cursor-pagination';
import { listQuery } from '@holdfast/cursor-pagination/express';
import { migrate } from '@holdfast/db/migrate';
import { fromPg, pgListener, pgTransaction } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
import { withIdempotency } from '@holdfast/idempotency/express';
import { fromZodError } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/express';
import { jsonBody, requestId } from '@holdfast/request-guards/express';
import {
  createDeliveryWorker,
  createEndpoint,
  migrations as deliveryMigrations,
  enqueueEvent,
  parseRetrySchedule,
} from '@holdfast/webhook-delivery';
import { webhookReceiver } from '@holdfast/webhook-verifier/express';
import { migrations as inboxMigrations, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import express from 'express';
import pg from 'pg';
import { drain, keyring, OrderInput, orderIdOf, orderSort, ready, shopMigration, toOrder } from './common.js';

// The packages' tables in a schema of their own, apart from the service's.
const schema = 'holdfast';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '' });
pool.on('error', () => {}); // an idle client whose backend died: the pool drops it
const db = fromPg(pool);
await migrate(db, [
  ...apiKeyMigrations({ schema }),
  ...idempotencyMigrations({ schema }),
  ...deliveryMigrations({ schema }),
  ...inboxMigrations({ schema }),
  shopMigration,
]);

const store = dbApiKeyStore(db, { schema });
const transaction = pgTransaction(pool);

let secret = '';
const inbox = postgresInbox(db, { schema });

const app = express();
app.use(requestId());
app.post(
  '/hooks/orders',
  webhookReceiver({ secrets: () => [secret], onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }) }),
);
app.use('/v1', apiKeyAuth({ store }));
app.use(jsonBody());
app.post('/v1/orders', async (req, res) => {
  const parsed = OrderInput.safeParse(req.body);
  if (!parsed.success) throw fromZodError(parsed.error);
  const account = req.principal?.account ?? '';
  await withIdempotency(req, res, { transaction, account, required: true, schema }, async (client, tx) => {
    const { rows } = await client.query(
      'insert into orders (id, account, item, quantity) values ($1, $2, $3, $4) returning *',
      [`ord_${crypto.randomUUID()}`, account, parsed.data.item, parsed.data.quantity],
    );
    const order = toOrder(rows[0]);
    await enqueueEvent(
      tx,
      {
        account,
        type: 'order.created',
        resourceId: order.id,
        object: order,
      },
      { schema },
    );
    return { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order };
  });
});
app.get('/v1/orders', async (req, res) => {
  const account = req.principal?.account ?? '';
  const binding = { account, resource: 'orders' };
  const query = await listQuery(req, { allowlist: orderSort, keyring, binding });
  res.json(
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
app.use(notFoundProblem(app));
app.use(onProblem());

const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as { port: number };
const url = `http://127.0.0.1:${port}`;

const key = await createKey(store, 'acct_adopter', ['*'], 'live');
const registered = await createEndpoint(
  db,
  { account: 'acct_adopter:live', url: `${url}/hooks/orders`, eventTypes: ['order.created'] },
  { allowPrivateDestinations: true, schema },
);
secret = registered.secret;

const worker = createDeliveryWorker({
  db,
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
    handle: async (entry, client) => {
      await client.query('insert into received_orders (webhook_id, order_id) values ($1, $2)', [
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
  await pool.end();
});
