import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/express';
import { webhookReceiver } from '@holdfast/webhook-verifier/express';
import { type InboxEntry, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import { eventVersion } from '@holdfast/webhook-verifier/receiver';
import express, { type Express, type Request } from 'express';
import type { Sql, TransactionSql } from 'postgres';
import { ORDER_EVENT_TYPES, parseOrderEvent } from './orders';

export interface ReceiverAppOptions {
  /** The pool: the inbox stores into it, the processor reads from it. Migrations applied. */
  readonly sql: Sql;
  /** Each receiver's secrets (or `whpk_` public keys) by name: `/hooks/shop` verifies with `shop`'s. */
  readonly receivers: ReadonlyMap<string, readonly string[]>;
  /** The clock the verifier judges timestamps by, in ms. @defaultValue `Date.now` */
  readonly now?: () => number;
  /** Where processing failures are reported. @defaultValue `console.error` */
  readonly log?: (message: string) => void;
}

export interface ReceiverApp {
  readonly app: Express;
  /** Works through the due inbox entries once; resolves to how many it handled. */
  processInbox(): Promise<number>;
}

const receiverName = (req: Request): string => String(req.params.name ?? '');

/** Applies one order event to `received_orders`, in the transaction that marks its entry processed. */
async function applyOrder(entry: InboxEntry, tx: TransactionSql): Promise<void> {
  const event = parseOrderEvent(entry.payload);
  // Thrown, the entry is retried and then set aside as `failed`, with this message kept.
  if (event === undefined)
    throw new TypeError(`entry ${entry.id} is not an order event this service understands`);
  const { id, status, total } = event.order;
  await tx`
    insert into received_orders (id, status, total, sequence) values (${id}, ${status}, ${total}, ${event.sequence})
    on conflict (id) do update set status = excluded.status, total = excluded.total,
      sequence = excluded.sequence, updated_at = date_trunc('milliseconds', now())`;
}

/**
 * The service: `POST /hooks/:name` verifies a Standard Webhook over its exact bytes and stores
 * it in the durable inbox (the event and its id's claim in one statement), then acknowledges:
 * 204 accepted, 200 for a duplicate `webhook-id`, problem+json for a refusal. Processing happens
 * after the answer, in {@link ReceiverApp.processInbox}: stale versions are discarded, other
 * event types are ignored, each order lands in `received_orders`.
 *
 * @example
 * ```ts
 * const { app, processInbox } = createReceiverApp({ sql, receivers: new Map([['shop', [secret]]]) });
 * app.listen(3000);
 * setInterval(() => void processInbox(), 1000);
 * ```
 */
export function createReceiverApp(options: ReceiverAppOptions): ReceiverApp {
  const inbox = postgresInbox(fromPostgres(options.sql));
  const app = express();
  app.post(
    '/hooks/:name',
    webhookReceiver({
      secrets: (req) => options.receivers.get(receiverName(req)), // undefined: 404
      scope: receiverName, // ids and versions are kept per receiver
      // The hand-off: stores the event and claims its id in one statement, then the answer goes.
      onEvent: (event, req) => inbox.enqueue(event, { scope: receiverName(req) }),
      ...(options.now ? { now: options.now } : {}),
    }),
  );
  // Other routes of the service would parse JSON here, after the receiver: it must see raw bytes.
  app.use(express.json());
  app.get('/orders/:id', async (req, res) => {
    const [order] = await options.sql`
      select id, status, total::int as total from received_orders where id = ${String(req.params.id)}`;
    // Thrown, it reaches onProblem(): 404 application/problem+json.
    if (order === undefined)
      throw problem('not_found', { detail: 'No order with this id has been received.' });
    res.json(order);
  });
  app.use(notFoundProblem(app));
  app.use(onProblem());

  return {
    app,
    processInbox: () =>
      inbox.process(postgresTransaction(options.sql), {
        types: ORDER_EVENT_TYPES,
        versions: (entry) => eventVersion(entry.payload),
        handle: applyOrder,
        ...(options.log ? { log: options.log } : {}),
      }),
  };
}
