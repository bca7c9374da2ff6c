import postgres from 'postgres';
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './worker';

/** {@link DeliveryWorkerOptions} with a connection string in place of a postgres.js client. */
export interface DeliveryWorkerUrlOptions extends Omit<DeliveryWorkerOptions, 'sql'> {
  /** `postgres://user@host:5432/db`: the worker opens its own pool on it and ends it on `stop()`. */
  readonly connectionString: string;
  /** Connections in that pool. @defaultValue 10 */
  readonly max?: number;
}

/**
 * A delivery worker on its own connections, from a connection string: for a service on
 * node-postgres, Drizzle, Kysely or Prisma, which enqueues through its own driver
 * (`enqueueEvent(fromPg(client), ...)`) and needs no postgres.js code of its own to deliver.
 * The worker runs on its own connections anyway, so nothing joins the service's transactions.
 *
 * @example
 * ```ts
 * const worker = deliveryWorkerFromUrl({ connectionString: process.env.DATABASE_URL ?? '' });
 * worker.start();
 * process.on('SIGTERM', () => void worker.stop());
 * ```
 */
export function deliveryWorkerFromUrl(options: DeliveryWorkerUrlOptions): DeliveryWorker {
  const { connectionString, max = 10, ...rest } = options;
  const sql = postgres(connectionString, { max, onnotice: () => {} });
  const worker = createDeliveryWorker({ ...rest, sql });
  return {
    start: () => worker.start(),
    runOnce: () => worker.runOnce(),
    async stop() {
      try {
        await worker.stop();
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}
