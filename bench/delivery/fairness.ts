// bench/delivery/fairness.ts (issue 35, finding 2): one account's hanging receivers beside
// another account's deliveries. Tenant A has 8 endpoints at a receiver that never answers and
// 400 queued deliveries; tenant B sends 60 deliveries at 10 a second to a receiver answering 204
// at once; one worker of 16 slots. Three cases in one run: B beside A with the defaults, B
// beside A with the account share off and new endpoints at their full ceiling (what remains is
// the scheduler's hold-back of slow receivers), and B alone, its baseline (last, so that it pays
// no warm-up). Each runs in a fresh schema. Usage:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/delivery/fairness.ts
// Ends with
//   fairness: tenant B p99 <x> ms beside a hanging tenant A (B alone <y> ms; share off <z> ms)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase } from '@holdfast/pg/testing';
import { createDeliveryWorker, createEndpoint, enqueueEvent, migrations } from '@holdfast/webhook-delivery';
import { summary } from '../summary';

const CEILING = 64;
const CONCURRENCY = 16;

interface Case {
  readonly name: string;
  readonly withA: boolean;
  /** The account share off and new endpoints at their ceiling. */
  readonly before: boolean;
}

interface Result {
  readonly received: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

async function run({ withA, before }: Case): Promise<Result> {
  const db = await createTestDatabase({ max: 8 });
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  const hang = createServer(() => {});
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const fast = createServer((request, response) => {
    const at = sentAt.get(String(request.headers['webhook-id']));
    if (at !== undefined) latencies.push(performance.now() - at);
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  const [hangUrl, fastUrl] = [await listen(hang), await listen(fast)];
  const endpoint = {
    allowPrivateDestinations: true,
    concurrencyMax: CEILING,
    ...(before ? { concurrencyInitial: CEILING } : {}),
  };
  if (withA) {
    for (let i = 0; i < 8; i += 1)
      await createEndpoint(fromPostgres(db.sql), { account: 'acct_A', url: hangUrl }, endpoint);
  }
  await createEndpoint(fromPostgres(db.sql), { account: 'acct_B', url: fastUrl }, endpoint);
  const worker = createDeliveryWorker({
    db: fromPostgres(db.sql),
    concurrency: CONCURRENCY,
    perEndpointConcurrency: CEILING,
    unsafeTimeoutMs: 8_000,
    allowPrivateDestinations: true,
    pollMs: 20,
    onError: () => {},
    schedule: [60_000],
    ...(before ? { accountShare: 1 } : {}),
  });
  worker.start();
  if (withA) {
    for (let i = 0; i < 400; i += 1) {
      await enqueueEvent(fromPostgres(db.sql), {
        account: 'acct_A',
        type: 'x',
        resourceId: `a${i}`,
        object: {},
      });
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let i = 0; i < 60; i += 1) {
    const event = await enqueueEvent(fromPostgres(db.sql), {
      account: 'acct_B',
      type: 'x',
      resourceId: `b${i}`,
      object: {},
    });
    sentAt.set(event.id, performance.now());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 9_000));
  hang.closeAllConnections();
  await worker.stop();
  for (const server of [hang, fast]) await new Promise((resolve) => server.close(resolve));
  await db.close();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    received: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

const cases: readonly Case[] = [
  { name: 'B beside A, defaults (share 0.25, start at 4)', withA: true, before: false },
  { name: 'B beside A, share off, endpoints start at the ceiling', withA: true, before: true },
  { name: 'B alone', withA: false, before: false },
];
const results: Result[] = [];
console.log('| case | B received | B p50 ms | B p99 ms | B max ms |');
console.log('|---|--:|--:|--:|--:|');
for (const one of cases) {
  const result = await run(one);
  results.push(result);
  const ms = (value: number) => value.toFixed(0);
  console.log(
    `| ${one.name} | ${result.received}/60 | ${ms(result.p50)} | ${ms(result.p99)} | ${ms(result.max)} |`,
  );
}
const [after, before, alone] = results;
summary(
  import.meta.url,
  `fairness: tenant B p99 ${after?.p99.toFixed(0)} ms beside a hanging tenant A (B alone ${alone?.p99.toFixed(0)} ms; share off ${before?.p99.toFixed(0)} ms)`,
);
process.exit(0);
