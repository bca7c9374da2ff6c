// Starts the service: `npm start -w @holdfast/example-fastify-orders`. It needs a PostgreSQL
// (DATABASE_URL); node-postgres is its only driver.
import pg from 'pg';
import { createOrdersApp } from './app';
import { migrate } from './migrations';

const connectionString = process.env.DATABASE_URL;
const cursorSecret = process.env.CURSOR_SECRET;
if (!connectionString || !cursorSecret || cursorSecret.length < 32) {
  console.error('Set DATABASE_URL, and CURSOR_SECRET to a secret of at least 32 characters.');
  process.exit(1);
}
const pool = new pg.Pool({ connectionString });
const applied = await migrate(pool);
if (applied.length > 0) console.log(`applied ${applied.join(', ')}`);

const app = createOrdersApp({ pool, keyring: { current: 'k1', keys: { k1: cursorSecret } } });
const port = Number(process.env.PORT ?? 3000);
await app.listen({ port, host: '127.0.0.1' });
console.log(`orders on http://127.0.0.1:${port}/orders`);

async function shutdown(): Promise<void> {
  await app.close();
  await pool.end();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
