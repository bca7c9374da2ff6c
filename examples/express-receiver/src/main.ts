// Starts the receiver: `npm start -w @holdfast/example-express-receiver`. With DATABASE_URL it
// uses that PostgreSQL; without, an embedded PGlite in memory (through the workspace's
// @holdfast/pg, so the example runs with nothing installed; a real service calls
// `postgres(process.env.DATABASE_URL)` itself).
import { connect } from '@holdfast/pg';
import { createReceiverApp } from './app';
import { migrate } from './migrations';

const secret = process.env.SHOP_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set SHOP_WEBHOOK_SECRET to the whsec_ secret (or whpk_ public key) the shop signs with.');
  process.exit(1);
}
const db = await connect({ databaseUrl: process.env.DATABASE_URL });
const applied = await migrate(db.sql);
if (applied.length > 0) console.log(`applied ${applied.join(', ')}`);

const { app, processInbox } = createReceiverApp({ sql: db.sql, receivers: new Map([['shop', [secret]]]) });
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () =>
  console.log(`receiving on http://127.0.0.1:${port}/hooks/shop (${db.description})`),
);

// The background half: due entries every second, one round at a time.
let running = false;
const timer = setInterval(() => {
  if (running) return;
  running = true;
  processInbox()
    .then((handled) => {
      if (handled > 0) console.log(`processed ${handled} inbox entries`);
    })
    .catch((error: unknown) => console.error('inbox processing failed:', error))
    .finally(() => {
      running = false;
    });
}, 1000);

function shutdown(): void {
  clearInterval(timer);
  server.close(() => void db.close().then(() => process.exit(0)));
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
