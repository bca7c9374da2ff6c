import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  type DeliveryWorker,
  deleteEndpoint,
  enqueueEvent,
  getDelivery,
  getEndpoint,
  listAttempts,
  migrations,
  updateEndpoint,
} from '../src/index';
import { leaseDue } from '../src/lease';
import { type EndpointPacing, pickRound, roundCandidates, roundParts } from '../src/pacing';
import { endPools, pgDb, pgQueue } from './fixtures/db';
import { dueDeliveries } from './fixtures/queue';

afterAll(endPools);

// Fairness across accounts: the lease statement's account share (checked against pickRound, the
// model scheduler.test.ts drives on the fake clock), new endpoints starting low, and attempts of
// deleted or disabled endpoints aborted instead of holding their slots to the timeout.

const ACCOUNT = 'acct_fair_a';
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
});

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3_000; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not reached');
}

/** A receiver that holds every request until `answer()`, and counts requests whose socket closed unanswered. */
async function holdingReceiver() {
  const waiting: ((status: number) => void)[] = [];
  const ids: string[] = [];
  let open = 0;
  let cut = 0;
  const server = createServer((req, res) => {
    ids.push(String(req.headers['webhook-id']));
    open += 1;
    let done = false;
    res.on('close', () => {
      open -= 1;
      if (!done) cut += 1;
    });
    req.resume();
    waiting.push((status) => {
      done = true;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    ids,
    open: () => open,
    cut: () => cut,
    answer: (status: number) => {
      for (const respond of waiting.splice(0)) respond(status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function startWorker(): DeliveryWorker {
  const worker = createDeliveryWorker({
    db: pgDb(db),
    schedule: [0],
    unsafeTimeoutMs: 60_000,
    allowPrivateDestinations: true,
    pollMs: 10,
    onError: () => {},
  });
  worker.start();
  return worker;
}

const inFlight = async (endpointId: string) => {
  const [row] = await db.sql<{ n: number }[]>`
    select (p.in_flight - coalesce((select sum(r.released) from holdfast_endpoint_releases r
      where r.endpoint_id = p.endpoint_id), 0))::int as n
    from holdfast_endpoint_pacing p where p.endpoint_id = ${endpointId}`;
  return row?.n;
};

describe('attempts of a deleted or disabled endpoint', () => {
  for (const change of ['deleted', 'disabled'] as const) {
    it(`are aborted once the endpoint is ${change}, give back their slot and lease, and count nothing against the receiver`, async () => {
      const hook = await holdingReceiver();
      const { endpoint } = await createEndpoint(
        fromPostgres(db.sql),
        { account: ACCOUNT, url: hook.url },
        { allowPrivateDestinations: true },
      );
      await enqueueEvent(fromPostgres(db.sql), {
        account: ACCOUNT,
        type: 'order.created',
        resourceId: 'ord_1',
        object: { id: 'ord_1' },
      });
      const [delivery] = await db.sql<{ id: string }[]>`select id from holdfast_deliveries`;
      const id = delivery?.id ?? '';
      const worker = startWorker();
      try {
        await until(() => hook.open() === 1);
        if (change === 'deleted')
          await deleteEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id });
        else
          await updateEndpoint(fromPostgres(db.sql), {
            account: ACCOUNT,
            id: endpoint.id,
            status: 'disabled',
          });
        // The request is cut (its timeout is a minute away) and the lease given back.
        await until(async () => hook.cut() === 1 && (await inFlight(endpoint.id)) === 0);
        const [row] = await db.sql<{ lease_owner: string | null; attempt_count: number; status: string }[]>`
          select lease_owner, attempt_count, status from holdfast_deliveries where id = ${id}`;
        expect(row).toEqual({ lease_owner: null, attempt_count: 0, status: 'pending' });
        expect(await listAttempts(fromPostgres(db.sql), { account: ACCOUNT, id: id })).toEqual([]);
        const [health] = await db.sql<{ failing_since: Date | null }[]>`
          select failing_since from holdfast_webhook_endpoints where id = ${endpoint.id}`;
        expect(health?.failing_since).toBeNull();
        if (change === 'disabled') {
          // Enabled again, the delivery is sent (it stayed due), once.
          await updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, status: 'active' });
          await until(() => hook.open() === 1);
          hook.answer(204);
          await until(
            async () =>
              (await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id }))?.status === 'succeeded',
          );
          expect(await listAttempts(fromPostgres(db.sql), { account: ACCOUNT, id: id })).toHaveLength(1);
        }
      } finally {
        hook.answer(204);
        await worker.stop();
        await hook.close();
      }
    });
  }
});

describe('a new endpoint', () => {
  it('starts at a low limit and earns its concurrency by fast successes, up to the ceiling', async () => {
    const answers: number[] = [];
    const server = createServer((req, res) => {
      answers.push(1);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url },
      { allowPrivateDestinations: true, concurrencyMax: 16 },
    );
    expect(endpoint.concurrency).toEqual({ current: 4, max: 16 });
    await dueDeliveries(db.sql, { account: ACCOUNT, endpointId: endpoint.id, tag: 'new', from: 1, to: 80 });
    const worker = createDeliveryWorker({
      db: pgDb(db),
      perEndpointConcurrency: 16,
      concurrency: 32,
      unsafeTimeoutMs: 5_000,
      allowPrivateDestinations: true,
      // Every answer is fast on this clock, which moves only by hand.
      now: () => Date.parse('2026-11-20T11:00:00Z'),
      onError: () => {},
    });
    const rounds: number[] = [];
    for (let i = 0; i < 40 && answers.length < 80; i += 1) rounds.push(await worker.runOnce());
    await worker.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(rounds[0]).toBe(4);
    for (let i = 1; i < rounds.length - 1; i += 1)
      expect(rounds[i]).toBeGreaterThanOrEqual(rounds[i - 1] ?? 0);
    expect(Math.max(...rounds)).toBeGreaterThan(4);
    const after = await getEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id });
    expect(after?.concurrency.current).toBeGreaterThan(4);
    expect(after?.concurrency.current).toBeLessThanOrEqual(16);
  });
});

describe('the lease statement across accounts', () => {
  const AT = Date.parse('2026-11-20T11:00:00Z');
  const caseArb = fc.record({
    accountShare: fc.integer({ min: 1, max: 8 }),
    limit: fc.integer({ min: 1, max: 16 }),
    accounts: fc.array(
      fc.record({
        running: fc.integer({ min: 0, max: 10 }),
        endpoints: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  });

  it('takes per account what pickRound takes: within each share first, beyond it only slots nobody else could use', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts cascade`;
        const pacing: EndpointPacing[] = [];
        const accounts = new Map<string, number>();
        for (const [a, account] of c.accounts.entries()) {
          const name = `acct_fair_${a}`;
          accounts.set(name, account.running);
          for (const [i, due] of account.endpoints.entries()) {
            const { endpoint } = await createEndpoint(
              fromPostgres(db.sql),
              { account: name, url: 'http://127.0.0.1:1024/hook' },
              { allowPrivateDestinations: true, concurrencyMax: 64, concurrencyInitial: 64 },
            );
            if (due > 0) {
              await dueDeliveries(db.sql, {
                account: name,
                endpointId: endpoint.id,
                tag: `f${a}_${i}`,
                from: 1,
                to: due,
              });
            }
            pacing.push({
              id: endpoint.id,
              account: name,
              limit: null,
              inFlight: 0,
              pausedUntil: null,
              maxPerSecond: null,
              tokens: null,
              tokensAt: null,
              due,
            });
          }
        }
        const request = {
          at: AT,
          limit: c.limit,
          perEndpoint: 64,
          share: 64,
          paused: [],
          running: new Map<string, number>(),
          accountShare: c.accountShare,
          accounts,
        };
        const rows = await leaseDue(pgQueue(db), {
          owner: 'wrk_fair',
          limit: c.limit,
          perEndpoint: 64,
          at: new Date(AT),
          leaseMs: 60_000,
          paused: [],
          endpointShare: 64,
          running: new Map(),
          accountShare: c.accountShare,
          accounts,
        });
        const got = new Map<string, number>();
        for (const row of rows) got.set(row.account_id, (got.get(row.account_id) ?? 0) + 1);
        const candidates = roundCandidates(pacing, request);
        if (candidates.length > c.limit) return; // the statement picks a random `limit` of them
        const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
        const parts = roundParts(candidates, request);
        const partsOf = new Map<string, number>();
        for (const e of candidates) {
          partsOf.set(e.account ?? '', (partsOf.get(e.account ?? '') ?? 0) + (parts.get(e.id) ?? 0));
        }
        // What each account may take within its share this round.
        const within = new Map(
          [...partsOf].map(([a, n]) => [
            a,
            Math.min(n, Math.max(0, c.accountShare - (accounts.get(a) ?? 0))),
          ]),
        );
        const byEndpoint = new Map<string, number>();
        for (const row of rows) byEndpoint.set(row.endpoint_id, (byEndpoint.get(row.endpoint_id) ?? 0) + 1);
        for (const [id, n] of byEndpoint) expect(n).toBeLessThanOrEqual(parts.get(id) ?? 0);
        expect(rows.length).toBe(Math.min(c.limit, sum(parts.values())));
        if (sum(within.values()) <= c.limit) {
          // Every account had all it could take within its share; the rest went to any.
          for (const [a, n] of within) expect(got.get(a) ?? 0).toBeGreaterThanOrEqual(n);
        } else {
          // Not enough slots for every share: nobody went beyond its own.
          for (const [a, n] of within) expect(got.get(a) ?? 0).toBeLessThanOrEqual(n);
        }
        if (sum(parts.values()) <= c.limit) {
          // Uncut, the statement and the model agree exactly, per endpoint.
          expect(new Map([...byEndpoint].sort())).toEqual(new Map([...pickRound(pacing, request)].sort()));
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
