// A plain Fetch handler, `(request: Request) => Promise<Response>`, served on node:http by
// createHonoServer, with Kysely on node-postgres: every Holdfast package on the one pool.
import type { AddressInfo } from 'node:net';
import {
  apiKeyAuthenticator,
  migrations as apiKeyMigrations,
  createKey,
  dbApiKeyStore,
} from '@holdfast/api-keys';
import { paginate, parseListQuery } from '@holdfast/cursor-pagination';
import { fromKysely, kyselyTransaction } from '@holdfast/db/kysely';
import { migrate } from '@holdfast/db/migrate';
import { pgListener } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations, idempotent } from '@holdfast/idempotency';
import { fromZodError, problem } from '@holdfast/problem-details';
import { jsonBodyReader, withRequestId } from '@holdfast/request-guards';
import { createHonoServer } from '@holdfast/request-guards/node';
import {
  createDeliveryWorker,
  createEndpoint,
  migrations as deliveryMigrations,
  enqueueEvent,
  parseRetrySchedule,
} from '@holdfast/webhook-delivery';
import { migrations as inboxMigrations, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import { webhookHandler } from '@holdfast/webhook-verifier/receiver';
import { type Generated, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { drain, keyring, OrderInput, orderIdOf, orderSort, ready, shopMigration, toOrder } from './common.js';

interface Database {
  orders: { id: string; account: string; item: string; quantity: number; created_at: Generated<Date> };
  received_orders: { webhook_id: string; order_id: string };
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '' });
pool.on('error', () => {}); // an idle client whose backend died: the pool drops it
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
const hf = fromKysely(db);
await migrate(hf, [
  ...apiKeyMigrations(),
  ...idempotencyMigrations(),
  ...deliveryMigrations(),
  ...inboxMigrations(),
  shopMigration,
]);

const store = dbApiKeyStore(hf);
const authenticate = apiKeyAuthenticator<Request>({ store });
const transaction = kyselyTransaction(db);
const readBody = jsonBodyReader();

let secret = '';
const inbox = postgresInbox(hf);
const receive = webhookHandler<Request>({
  secrets: () => [secret],
  onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }),
});

const handler = withRequestId(async (request, requestId) => {
  const { pathname } = new URL(request.url);
  if (pathname === '/hooks/orders' && request.method === 'POST') return receive(request, request);
  if (pathname !== '/v1/orders' || (request.method !== 'GET' && request.method !== 'POST'))
    throw problem('not_found', { detail: `No route for ${request.method} ${pathname}.` });
  const { account } = await authenticate(request.headers.get('authorization') ?? undefined, request);
  if (request.method === 'POST') {
    const body = await readBody(request);
    const parsed = OrderInput.safeParse(body);
    if (!parsed.success) throw fromZodError(parsed.error);
    const keyed = {
      key: request.headers.get('idempotency-key'),
      account,
      method: 'POST',
      path: pathname,
      body,
      required: true,
      requestId,
    };
    return idempotent(transaction, keyed, async (trx, trxDb) => {
      const row = await trx
        .insertInto('orders')
        .values({
          id: `ord_${crypto.randomUUID()}`,
          account,
          item: parsed.data.item,
          quantity: parsed.data.quantity,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const order = {
        id: row.id,
        item: row.item,
        quantity: row.quantity,
        createdAt: row.created_at.toISOString(),
      };
      await enqueueEvent(trxDb, {
        account,
        type: 'order.created',
        resourceId: order.id,
        object: order,
      });
      return { status: 201, headers: { Location: `/v1/orders/${order.id}` }, body: order };
    });
  }
  {
    const binding = { account, resource: 'orders' };
    const query = await parseListQuery(new URL(request.url), { allowlist: orderSort, keyring, binding });
    const page = await paginate(hf, {
      from: 'orders',
      where: { text: 'account = $1', values: [account] },
      allowlist: orderSort,
      binding,
      keyring,
      map: toOrder,
      ...query.params,
    });
    return Response.json(page);
  }
});

const server = createHonoServer(handler, { hostname: '127.0.0.1' });
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const key = await createKey(store, 'acct_adopter', ['*'], 'live');
const registered = await createEndpoint(
  hf,
  { account: 'acct_adopter:live', url: `${url}/hooks/orders`, eventTypes: ['order.created'] },
  { allowPrivateDestinations: true },
);
secret = registered.secret;

const worker = createDeliveryWorker({
  db: hf,
  listener: pgListener(pool),
  allowPrivateDestinations: true,
  schedule: parseRetrySchedule('1s,2s,5s'),
  pollMs: 250,
  onError: (error) => console.error('delivery worker:', error),
});
worker.start();
const inboxLoop = drain(() =>
  inbox.process(transaction, {
    types: ['order.created'],
    handle: async (entry, trx) => {
      await trx
        .insertInto('received_orders')
        .values({ webhook_id: entry.webhookId, order_id: orderIdOf(entry.payload) })
        .execute();
    },
  }),
);

ready(url, key, async () => {
  await worker.stop();
  await inboxLoop.stop();
  server.close();
  await db.destroy();
});
