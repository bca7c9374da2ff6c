// A plain Fetch handler, `(request: Request) => Promise<Response>`, served on node:http by
// createHonoServer, with Kysely on node-postgres: every Holdfast package on the one pool.
import type { AddressInfo } from 'node:net';
import { apiKeyAuthenticator, createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { migrations as apiKeyMigrations } from '@holdfast/api-keys/postgres';
import { paginate, parseListQuery } from '@holdfast/cursor-pagination';
import { fromKysely, kyselyTransaction } from '@holdfast/db/kysely';
import { migrate } from '@holdfast/db/migrate';
import { idempotentInTransaction } from '@holdfast/idempotency';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency/postgres';
import { fromZodError, notFoundOrNotAllowed } from '@holdfast/problem-details';
import { jsonBodyReader, withRequestId } from '@holdfast/request-guards';
import { createHonoServer } from '@holdfast/request-guards/node';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { parseRetrySchedule } from '@holdfast/webhook-delivery';
import {
  createEndpoint,
  migrations as deliveryMigrations,
  deliveryWorkerFromUrl,
  enqueueEvent,
} from '@holdfast/webhook-delivery/postgres';
import { inboxFromUrl, migrations as inboxMigrations } from '@holdfast/webhook-verifier/postgres';
import { webhookHandler } from '@holdfast/webhook-verifier/receiver';
import { type Generated, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { z } from 'zod';

interface Database {
  orders: { id: string; account: string; item: string; quantity: number; created_at: Generated<Date> };
}

const connectionString = process.env.DATABASE_URL ?? '';
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString }) }),
});
const shop = {
  id: 'shop/001_orders',
  sql: `create table orders (id text primary key, account text not null, item text not null,
    quantity integer not null, created_at timestamptz(3) not null default now());
  create table received_orders (webhook_id text not null, order_id text not null);`,
};
await migrate(fromKysely(db), [
  ...apiKeyMigrations,
  ...idempotencyMigrations,
  ...deliveryMigrations,
  ...inboxMigrations,
  shop,
]);

const store = dbApiKeyStore(fromKysely(db));
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
const inbox = inboxFromUrl({ connectionString });
const receive = webhookHandler<Request>({
  secrets: () => [secret],
  onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }),
});

const handler = withRequestId(async (request, requestId) => {
  const { pathname } = new URL(request.url);
  if (pathname === '/hooks/orders' && request.method === 'POST') return receive(request, request);
  if (pathname !== '/v1/orders' || (request.method !== 'GET' && request.method !== 'POST'))
    throw notFoundOrNotAllowed(request.method, pathname, pathname === '/v1/orders' ? ['GET', 'POST'] : []);
  const { account } = await authenticate(request.headers.get('authorization') ?? undefined, request);
  if (request.method === 'POST') {
    const body = await readBody(request);
    const parsed = OrderInput.safeParse(body);
    if (!parsed.success) throw fromZodError(parsed.error);
    const idempotent = {
      key: request.headers.get('idempotency-key'),
      account,
      method: 'POST',
      path: pathname,
      body,
      required: true,
      requestId,
    };
    return idempotentInTransaction(transaction, idempotent, async (trx) => {
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
      await enqueueEvent(fromKysely(trx), {
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
    const page = await paginate(fromKysely(db), {
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
// createEndpoint takes a postgres.js Sql only: a second driver and a second pool.
const endpointSql = postgres(connectionString, { max: 1 });
const registered = await createEndpoint(
  endpointSql,
  { account: 'acct_adopter:live', url: `${url}/hooks/orders`, eventTypes: ['order.created'] },
  { allowPrivateDestinations: true },
);
secret = registered.secret;

const worker = deliveryWorkerFromUrl({
  connectionString,
  allowPrivateDestinations: true,
  schedule: parseRetrySchedule('1s,2s,5s'),
  pollMs: 250,
});
worker.start();
let stopping = false;
const processing = (async () => {
  while (!stopping) {
    const handled = await inbox.process({
      types: ['order.created'],
      handle: async (entry, tx) => {
        const { data } = entry.payload as { data: { object: { id: string } } };
        await tx.query('insert into received_orders (webhook_id, order_id) values ($1, $2)', [
          entry.webhookId,
          data.object.id,
        ]);
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
  await Promise.all([inbox.end(), endpointSql.end(), db.destroy()]);
});
console.log(`READY ${JSON.stringify({ url, key })}`);
