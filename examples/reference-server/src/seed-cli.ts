import { createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { migrate } from '@holdfast/db/migrate';
import { loadConfig } from './config';
import { allMigrations, openDatabase } from './db';
import { demoReceiverPath } from './demo/receiver';
import { databaseIsEmpty, httpApiCall, seedDemoData } from './demo/seed';

// `npm run seed`: with the server running (`npm start`), writes the demo data set that
// `npm start` writes by itself on an empty database, for account acct_demo, through the
// server's API with a new key (printed once). Refused in production and on a database that
// already holds data. HOLDFAST_URL names the server when it is not at HOST:PORT.

const config = loadConfig(process.env);
if (config.production) {
  console.error('npm run seed writes demo data: it never runs with NODE_ENV=production.');
  process.exit(2);
}
const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
const base = (
  process.env.HOLDFAST_URL || `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`
).replace(/\/+$/, '');
const up = await fetch(`${base}/healthz`).then(
  (res) => res.ok,
  () => false,
);
if (!up) {
  console.error(`No Holdfast server answers at ${base}: start it first (npm start), or set HOLDFAST_URL.`);
  process.exit(1);
}
const db = await openDatabase(config, 'join').catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
// The database work first, then the connection closed: on embedded PGlite it is the running
// server's own, which must not carry this process's statements while it answers the seeding.
let key: string | undefined;
try {
  await migrate(db.db, await allMigrations());
  if (await databaseIsEmpty(db.db)) key = await createKey(dbApiKeyStore(db.db), 'acct_demo', ['*']);
  else
    console.error(
      `${db.description} already holds data: nothing was seeded (demo data goes to an empty database only). To start over, stop the server, ${config.databaseUrl ? 'point DATABASE_URL at an empty database' : `delete ${config.dataDir}`}, and start it again: npm start seeds an empty database by itself.`,
    );
} finally {
  await db.close();
}
if (key === undefined) process.exit(1);
try {
  // The built-in receiver answers only outside production.
  const probe = await fetch(`${base}${demoReceiverPath('ok')}`, { method: 'POST', body: '{}' }).then(
    (res) => res.status === 200,
    () => false,
  );
  const summary = await seedDemoData({
    call: httpApiCall(base, key),
    receiverBase: probe ? base : undefined,
  });
  console.log(
    [
      `Seeded acct_demo through ${base}: ${summary.orders} orders, ${summary.payments} payments, ${summary.refunds} refund, ${summary.subscriptions} subscription, ${summary.endpoints} webhook endpoints.`,
      probe
        ? 'The endpoints point at the server’s built-in demo receiver.'
        : `No webhook endpoints: the server's built-in demo receiver does not answer at ${base}${demoReceiverPath('ok')} (it runs outside production only).`,
      `API key for acct_demo, test mode (all scopes). It is shown this once:\n${key}`,
    ].join('\n'),
  );
} catch (error) {
  console.error(`Seeding failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
