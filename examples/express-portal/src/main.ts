// Starts the service: `npm start -w @holdfast/example-express-portal`. It needs a PostgreSQL
// (DATABASE_URL); node-postgres is its only driver.
import pg from 'pg';
import { createPortalHost, PORTAL_BASE } from './app';
import { migrate } from './migrations';

const { DATABASE_URL, PORTAL_SESSION_SECRET, CURSOR_SECRET } = process.env;
if (!DATABASE_URL || (PORTAL_SESSION_SECRET ?? '').length < 32 || (CURSOR_SECRET ?? '').length < 32) {
  console.error(
    'Set DATABASE_URL, and PORTAL_SESSION_SECRET and CURSOR_SECRET to secrets of at least 32 characters.',
  );
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
const pool = new pg.Pool({ connectionString: DATABASE_URL });
// An idle client whose backend ended reports it here: handled, the pool replaces it.
pool.on('error', (error) => console.error('pool:', error.message));
const applied = await migrate(pool);
if (applied.length > 0) console.log(`applied ${applied.join(', ')}`);

const { app, worker } = createPortalHost({
  pool,
  // Your sign-in goes here; this demo knows two customers by a fixed token each.
  customers: new Map([
    ['demo-acme', { account: 'acct_acme', name: 'Acme' }],
    ['demo-globex', { account: 'acct_globex', name: 'Globex' }],
  ]),
  sessionSecret: PORTAL_SESSION_SECRET ?? '',
  cursorSecret: CURSOR_SECRET ?? '',
  publicUrl: process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`,
  // The demo receiver of this same process is at a loopback address: allowed only when asked.
  allowPrivateDestinations: process.env.ALLOW_PRIVATE_DESTINATIONS === '1',
});
worker.start();
const server = app.listen(port, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${port} (portal at ${PORTAL_BASE})`);
});

async function shutdown(): Promise<void> {
  server.close();
  await worker.stop();
  await pool.end();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
