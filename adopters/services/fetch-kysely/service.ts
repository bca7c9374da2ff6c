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
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
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
import { z } from 'zod';

interface Database {
  orders: { id: string; account: string; item: string; quantity: number; created_at: Generated<Date> };
  received_orders: { webhook_id: string; order_id: string };
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '' });
pool.on('error', () => {}); // an idle client whose backend died: the pool drops it
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
const hf = fromKysely(db);
const shop = {
  id: 'shop/001_orders',
  sql: `create table orders (id text primary key, account text not null, item text not null,
    quantity integer not null, created_at timestamptz(3) not null default now());
  create table received_orders (webhook_id text not null, order_id text not null);`,
};
await migrate(hf, [
  ...apiKeyMigrations(),
  ...idempotencyMigrations(),
  ...deliveryMigrations(),
  ...inboxMigrations(),
  shop,
]);

const store = dbApiKeyStore(hf);
const authenticate = apiKeyAuthenticator<Request>({ store });
const transaction = kyselyTransaction(db);
const readBody = jsonBodyReader();
const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    quantity: { column: 'quantity', type: 'number' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring = { current: 'k1', keys: { k1: 'an-adopter-cursor-secret-of-32-bytes-or-more' } };
const OrderInput = z
  .object({ item: z.string().min(1).max(100), quantity: z.number().int().min(1).max(1000) })
  .strict();

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
      map: (row) => ({
        id: String(row.id),
        item: String(row.item),
        quantity: Number(row.quantity),
        createdAt: new Date(row.created_at as string | Date).toISOString(),
      }),
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
let stopping = false;
const processing = (async () => {
  while (!stopping) {
    const handled = await inbox.process({
      transaction,
      types: ['order.created'],
      handle: async (entry, trx) => {
        const { data } = entry.payload as { data: { object: { id: string } } };
        await trx
          .insertInto('received_orders')
          .values({ webhook_id: entry.webhookId, order_id: data.object.id })
          .execute();
      },
    });
    if (handled === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();

process.once('SIGTERM', async () => {
  stopping = true;
  await worker.stop();
  await processing;
  server.close();
  await db.destroy();
});
console.log(`READY ${JSON.stringify({ url, key })}`);
