// The reference server as bench/server measures it: the whole stack, API role (no workers),
// production settings, on the schema run.ts prepared. Run by run.ts in its own process.
import { startServer } from '../../examples/reference-server/src/server';
import { answerParent } from './child';

const url = new URL(process.env.DATABASE_URL ?? '');
url.searchParams.set('options', `-c search_path=${process.env.BENCH_SCHEMA}`);
const server = await startServer({
  env: {
    DATABASE_URL: url.toString(),
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    HOLDFAST_ROLE: 'api',
    HOLDFAST_API_KEYS: JSON.stringify([
      { key: process.env.BENCH_KEY, account: process.env.BENCH_ACCOUNT, scopes: ['*'] },
    ]),
    // The limiter runs on every request, as in production, but must not refuse the load.
    HOLDFAST_RATE_LIMIT: '100000000/1s',
  },
});
process.send?.({ url: server.url });
answerParent(() => server.close());
