import { type Keyring, paginate } from '@holdfast/cursor-pagination';
import { fromPg, pgListener, pgTransaction } from '@holdfast/db/pg';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/express';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import {
  createDeliveryWorker,
  type DeliveryWorker,
  enqueueEvent,
  getEvent,
  toEvent,
} from '@holdfast/webhook-delivery';
import {
  createPortalSession,
  eventTypeRules,
  type PortalCaller,
  portalPages,
  portalSessionAuthorizer,
  webhookManagementApi,
} from '@holdfast/webhook-portal';
import { webhookManagement } from '@holdfast/webhook-portal/express';
import express, { type Express, type Request } from 'express';
import type pg from 'pg';

/** One of this service's customers, as its own sign-in knows them. */
export interface Customer {
  /** The tenant: every webhook statement is scoped by it. */
  readonly account: string;
  readonly name: string;
}

export interface PortalHostOptions {
  /** node-postgres pool, migrations applied: the API, the events list and the worker share it. */
  readonly pool: pg.Pool;
  /** This service's own auth, a stand-in for yours: bearer token → customer. */
  readonly customers: ReadonlyMap<string, Customer>;
  /** Signs portal sessions: at least 32 bytes, from your vault. */
  readonly sessionSecret: string;
  /** Signs list cursors: at least 32 bytes. */
  readonly cursorSecret: string;
  /** The origin customers reach this service at (`https://shop.example.com`). */
  readonly publicUrl: string;
  /** Retry delays of the delivery worker, in ms. @defaultValue the package's (1 min to 24 h) */
  readonly retrySchedule?: readonly number[];
  /** Local development only: let endpoints at loopback and private addresses through. */
  readonly allowPrivateDestinations?: boolean;
  /** The clock portal sessions are issued and checked by, in ms. @defaultValue `Date.now` */
  readonly now?: () => number;
}

export interface PortalHost {
  readonly app: Express;
  /** The delivery worker on the same pool: `start()` it, `stop()` it before ending the pool. */
  readonly worker: DeliveryWorker;
}

/** The event types this service sends, and the scope that may read each. */
export const EVENT_TYPES = {
  'order.created': ['orders:read'],
  'order.shipped': ['orders:read'],
  'payment.failed': ['payments:read'],
} as const satisfies Record<string, readonly string[]>;

/** Where the management API and the portal live: the portal's page calls the API under `API_BASE`. */
export const API_BASE = '/webhooks';
export const PORTAL_BASE = '/webhooks/portal';

/** Everything a portal session may do, unless it is read-only. */
const SESSION_SCOPES = ['webhooks:read', 'webhooks:write', 'orders:read', 'payments:read'];

const eventSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

function inRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && value >= min && value <= max;
}

/** The request's headers as a Fetch `Request`, for `authorize` (it reads only `Authorization`). */
function fetchRequest(req: Request, origin: string): globalThis.Request {
  return new globalThis.Request(new URL(req.originalUrl, origin), {
    headers: { authorization: req.get('authorization') ?? '' },
  });
}

/**
 * The service: its own customers and routes (`POST /orders` writes an order and its
 * `order.created` event in one transaction; `POST /portal-sessions` opens the portal for the
 * signed-in customer), the webhook management API and portal of `@holdfast/webhook-portal`
 * under `/webhooks` (the API answers portal sessions and this service's own tokens), the events
 * the portal lists, a demo receiver, and the delivery worker on the same pool.
 *
 * @example
 * ```ts
 * const { app, worker } = createPortalHost({ pool, customers, sessionSecret, cursorSecret, publicUrl });
 * worker.start();
 * app.listen(3000);
 * ```
 */
export function createPortalHost(options: PortalHostOptions): PortalHost {
  const { pool, customers, publicUrl } = options;
  const db = fromPg(pool);
  const now = options.now ?? Date.now;
  const sessions = portalSessionAuthorizer({ secret: options.sessionSecret, now });
  const keyring: Keyring = { current: 'k1', keys: { k1: options.cursorSecret } };
  const rules = eventTypeRules(EVENT_TYPES);

  /** A customer signed in with this service's own bearer token: the API trusts it fully. */
  const customerOf = (authorization: string | null | undefined): Customer | undefined =>
    customers.get(/^Bearer (\S+)$/.exec(authorization ?? '')?.[1] ?? '');
  const authorize = async (request: globalThis.Request): Promise<PortalCaller | undefined> => {
    const customer = customerOf(request.headers.get('authorization'));
    if (customer !== undefined)
      return { account: customer.account, livemode: false, scopes: new Set(SESSION_SCOPES) };
    return sessions(request);
  };
  const signedIn = (req: Request): Customer => {
    const customer = customerOf(req.get('authorization'));
    if (customer === undefined) throw problem('unauthenticated', { detail: 'Sign in with your token.' });
    return customer;
  };
  const caller = async (req: Request): Promise<PortalCaller> => {
    const found = await authorize(fetchRequest(req, publicUrl));
    if (found === undefined) throw problem('unauthenticated', { detail: 'Open the portal again.' });
    return found;
  };

  const destinations = { allowPrivateDestinations: options.allowPrivateDestinations === true };
  const api = webhookManagementApi({
    db,
    transaction: pgTransaction(pool),
    keyring,
    authorize,
    eventTypes: EVENT_TYPES,
    basePath: API_BASE,
    destinations,
    pages: portalPages({ basePath: PORTAL_BASE, apiBase: API_BASE, eventTypes: Object.keys(EVENT_TYPES) }),
  });
  const worker = createDeliveryWorker({
    db,
    listener: pgListener(pool),
    ...destinations,
    ...(options.retrySchedule ? { schedule: options.retrySchedule } : {}),
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json());

  // Your backend opens the portal for the signed-in customer: the token travels in the URL's
  // fragment, so no server log sees it.
  app.post('/portal-sessions', async (req, res) => {
    const customer = signedIn(req);
    const { readOnly = false, expiresIn = 900 } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof readOnly !== 'boolean' || !Number.isSafeInteger(expiresIn) || !inRange(expiresIn, 1, 86_400))
      throw problem('validation_failed', {
        detail: 'readOnly is a boolean; expiresIn a whole number of seconds, at most a day.',
      });
    const session = await createPortalSession(
      { account: customer.account, mode: 'test', scopes: SESSION_SCOPES, expiresIn, readOnly },
      { secret: options.sessionSecret, portalUrl: new URL(PORTAL_BASE, publicUrl), now },
    );
    res.status(201).json({ url: session.url, expiresAt: session.expiresAt.toISOString() });
  });

  // A business write and its event in one transaction: the outbox sends it once it commits.
  app.post('/orders', async (req, res) => {
    const customer = signedIn(req);
    const { total } = (req.body ?? {}) as Record<string, unknown>;
    if (!Number.isSafeInteger(total) || !inRange(total, 0, Number.MAX_SAFE_INTEGER))
      throw problem('validation_failed', { detail: 'total is a non-negative integer.' });
    const order = { id: `ord_${crypto.randomUUID().replaceAll('-', '')}`, total, status: 'pending' };
    const event = await pgTransaction(pool)(async (client, tx) => {
      await client.query('insert into orders (id, account_id, total) values ($1, $2, $3)', [
        order.id,
        customer.account,
        total,
      ]);
      return enqueueEvent(tx, {
        account: customer.account,
        type: 'order.created',
        resourceId: order.id,
        object: order,
      });
    });
    res.status(201).json({ ...order, event: event.id });
  });

  // The portal's Events page and each delivery's payload: the events of the caller's account, of
  // the types its scopes may read.
  app.get(`${API_BASE}/events`, async (req, res) => {
    const who = await caller(req);
    const query = new URL(req.originalUrl, publicUrl).searchParams;
    const page = await paginate(db, {
      from: 'holdfast_events',
      where: {
        text: 'account_id = $1 and type = any($2::text[])',
        values: [who.account, rules.readable(who)],
      },
      allowlist: eventSort,
      sort: query.get('sort'),
      cursor: query.get('cursor'),
      limit: query.get('limit'),
      binding: { account: who.account, resource: 'events' },
      keyring,
      map: toEvent,
    });
    res.json(page);
  });
  app.get(`${API_BASE}/events/:id`, async (req, res) => {
    const who = await caller(req);
    const event = await getEvent(db, { account: who.account, id: String(req.params.id) });
    if (event === undefined || !rules.visible(who, event.type))
      throw problem('not_found', { detail: 'No event with this id.' });
    res.json(event);
  });

  app.use(webhookManagement(api));

  // A receiver to point a first endpoint at while trying the portal locally.
  app.post('/demo-receiver', (_req, res) => {
    res.status(200).type('text/plain').send('ok: received');
  });

  app.use(notFoundProblem(app));
  app.use(onProblem());
  return { app, worker };
}
