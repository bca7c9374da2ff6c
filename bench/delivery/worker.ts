// One delivery worker process for bench/delivery, configured from the environment that run.ts
// sets (CONCURRENCY, PER_ENDPOINT, POLL_MS: the reference server's HOLDFAST_DELIVERY_* defaults
// unless overridden). ENGINE (a path to another copy's src/postgres.ts) runs that version
// instead, to compare two engines in one sitting. Prints "ready"; SIGTERM stops it gracefully.
import { fromPg } from '@holdfast/db/pg';
import * as engine from '@holdfast/webhook-delivery';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '', max: 10 });
pool.on('error', (error) => console.error('bench pool:', error.message));
const { createDeliveryWorker } = (
  process.env.ENGINE ? await import(process.env.ENGINE) : engine
) as typeof engine;
const worker = createDeliveryWorker({
  db: fromPg(pool),
  allowPrivateDestinations: true,
  concurrency: Number(process.env.CONCURRENCY),
  perEndpointConcurrency: Number(process.env.PER_ENDPOINT),
  pollMs: Number(process.env.POLL_MS),
  onError: (error) => console.error('bench worker:', error),
});
worker.start();
console.log('ready');
process.once('SIGTERM', () => {
  void worker
    .stop()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
