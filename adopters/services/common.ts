// What every adopter service shares and no Holdfast package decides: the shop's own tables, its
// order resource (input schema, sorts, API shape), its cursor secret, the loop that drains the
// inbox, and the READY line the harness waits for. The run copies this file beside each
// service.ts; the package wiring stays in service.ts.
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { z } from 'zod';

/** The shop's own tables, applied after the packages' migrations by the same runner. */
export const shopMigration = {
  id: 'shop/001_orders',
  sql: `create table orders (id text primary key, account text not null, item text not null,
    quantity integer not null, created_at timestamptz(3) not null default now());
  create table received_orders (webhook_id text not null, order_id text not null);`,
};

export const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    quantity: { column: 'quantity', type: 'number' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

export const keyring = { current: 'k1', keys: { k1: 'an-adopter-cursor-secret-of-32-bytes-or-more' } };

export const OrderInput = z
  .object({ item: z.string().min(1).max(100), quantity: z.number().int().min(1).max(1000) })
  .strict();

// A type, not an interface: an outbox event's object is a Record<string, unknown>.
export type Order = { id: string; item: string; quantity: number; createdAt: string };

/** A row of `orders` as the API shows it (drivers hand timestamptz back as a Date or text). */
export function toOrder(row: Record<string, unknown>): Order {
  return {
    id: String(row.id),
    item: String(row.item),
    quantity: Number(row.quantity),
    createdAt: new Date(row.created_at as string | Date).toISOString(),
  };
}

/** The order id an `order.created` webhook carries. */
export function orderIdOf(payload: unknown): string {
  return (payload as { data: { object: { id: string } } }).data.object.id;
}

/** Runs `processOnce` (the inbox's `process`) until `stop()`, pausing when nothing was due. */
export function drain(processOnce: () => Promise<number>): { stop(): Promise<void> } {
  let stopping = false;
  const running = (async () => {
    while (!stopping)
      if ((await processOnce()) === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  })();
  return {
    stop() {
      stopping = true;
      return running;
    },
  };
}

/** Tells the harness where the service listens and which key to use; SIGTERM then runs `stop`. */
export function ready(url: string, key: string, stop: () => Promise<void>): void {
  process.once('SIGTERM', () => {
    stop().catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
  });
  console.log(`READY ${JSON.stringify({ url, key })}`);
}
