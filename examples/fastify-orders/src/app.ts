import { type Keyring, paginate } from '@holdfast/cursor-pagination';
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import { withIdempotency } from '@holdfast/idempotency/fastify';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/fastify';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type pg from 'pg';
import { type Order, type OrderStatus, orderSort, parseOrderInput } from './orders';

export interface OrdersAppOptions {
  /** node-postgres pool, migrations applied. */
  readonly pool: pg.Pool;
  /** Signs and verifies list cursors: secrets of at least 32 bytes, `current` signs (rotation). */
  readonly keyring: Keyring;
  /**
   * The authenticated account of a request, or `undefined` (401). A stand-in for your
   * authentication: the default reads the `x-account` header, which a real service would
   * derive from a verified credential instead.
   */
  readonly account?: (request: FastifyRequest) => string | undefined;
  /** The clock orders are stamped with, in ms. @defaultValue `Date.now` */
  readonly now?: () => number;
  /** A new order's id. @defaultValue `ord_` and 32 random hex digits */
  readonly newId?: () => string;
}

interface OrderRow {
  id: string;
  customer: string;
  status: OrderStatus;
  total: string | number;
  created_at: string | Date;
}

// Every driver may hand bigint back as text and timestamptz as a Date or text: the API shape is fixed here.
function toOrder(row: Record<string, unknown>): Order {
  const order = row as unknown as OrderRow;
  return {
    id: order.id,
    customer: order.customer,
    status: order.status,
    total: Number(order.total),
    createdAt: new Date(order.created_at).toISOString(),
  };
}

const LIST_PARAMETERS = new Set(['sort', 'cursor', 'limit', 'include', 'status']);

/** One query parameter's value; repeated or unknown parameters are 400, never silently dropped. */
function listQuery(query: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const errors: { field: string; code: string; detail: string }[] = [];
  const values: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!LIST_PARAMETERS.has(name)) {
      errors.push({ field: name.slice(0, 100), code: 'unknown', detail: 'Not a parameter of this list.' });
    } else if (Array.isArray(value)) {
      errors.push({ field: name, code: 'repeated', detail: 'Given more than once.' });
    } else values[name] = value;
  }
  if (errors.length > 0) throw problem('validation_failed', { detail: 'The query is not valid.', errors });
  return values;
}

function defaultId(): string {
  return `ord_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * The service: `POST /orders` (an `Idempotency-Key` is required; the order and the stored
 * answer commit in one node-postgres transaction, so a retry replays the answer with
 * `Idempotent-Replayed: true` and never creates a second order), `GET /orders` (keyset pages,
 * `sort` from an allowlist, signed cursors bound to account, sort and filter), `GET
 * /orders/:id`. Every error is `application/problem+json`. No postgres.js: the Holdfast
 * statements run through the `Db` boundary (`fromPg`).
 *
 * @example
 * ```ts
 * const app = createOrdersApp({ pool, keyring: { current: 'k1', keys: { k1: process.env.CURSOR_SECRET ?? '' } } });
 * await app.listen({ port: 3000 });
 * ```
 */
export function createOrdersApp(options: OrdersAppOptions): FastifyInstance {
  const { pool, keyring } = options;
  const now = options.now ?? Date.now;
  const newId = options.newId ?? defaultId;
  const accountOf =
    options.account ??
    ((request: FastifyRequest) => {
      const header = request.headers['x-account'];
      return typeof header === 'string' && header !== '' ? header : undefined;
    });
  const authenticated = (request: FastifyRequest): string => {
    const account = accountOf(request);
    if (account === undefined) throw problem('unauthenticated', { detail: 'Say which account: x-account.' });
    return account;
  };

  const app = Fastify();
  app.setErrorHandler(onProblem());
  app.setNotFoundHandler(notFoundProblem(app));

  const transaction = pgTransaction(pool);
  app.post('/orders', async (request, reply) => {
    const account = authenticated(request);
    // Validation first: a 400 here claims no key and writes nothing.
    const input = parseOrderInput(request.body);
    // The key's claim, the order and the stored answer: one pg transaction, so exactly once.
    const answer = await withIdempotency(
      request,
      { transaction, account, required: true },
      async (client) => {
        const order: Order = { id: newId(), ...input, createdAt: new Date(now()).toISOString() };
        await client.query(
          `insert into orders (id, account_id, customer, status, total, created_at)
         values ($1, $2, $3, $4, $5, $6::timestamptz)`,
          [order.id, account, order.customer, order.status, order.total, order.createdAt],
        );
        return { status: 201, headers: { Location: `/orders/${order.id}` }, body: order };
      },
    );
    return reply.send(answer);
  });

  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/orders', async (request) => {
    const account = authenticated(request);
    const query = listQuery(request.query);
    return paginate(fromPg(pool), {
      from: 'orders',
      where: { text: 'account_id = $1', values: [account] }, // tenancy: written in code
      allowlist: orderSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      filterColumns: { status: 'status' },
      filter: { status: query.status },
      binding: { account, resource: 'orders' },
      keyring,
      map: toOrder,
    });
  });

  app.get<{ Params: { id: string } }>('/orders/:id', async (request) => {
    const account = authenticated(request);
    const { rows } = await pool.query<Record<string, unknown>>(
      'select id, customer, status, total, created_at from orders where account_id = $1 and id = $2',
      [account, request.params.id],
    );
    const [row] = rows;
    if (row === undefined) throw problem('not_found', { detail: 'No order with this id.' });
    return toOrder(row);
  });

  return app;
}
