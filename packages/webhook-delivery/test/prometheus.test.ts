import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations } from '../src/index';
import { attemptOutcome, deliveryMetrics, queueDepth } from '../src/prometheus';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

describe('queueDepth', () => {
  it('counts due deliveries on active endpoints, and shares one answer within a second', async () => {
    let now = 0;
    const depth = queueDepth(pgDb(db), { now: () => now });
    expect(await depth()).toEqual({ due: 0, inFlight: 0, dead: 0, oldestDueSeconds: 0 });
    await createEndpoint(
      fromPostgres(db.sql),
      { account: 'acct_q', url: 'http://127.0.0.1:1024/hook', eventTypes: ['*'] },
      { allowPrivateDestinations: true },
    );
    await enqueueEvent(fromPostgres(db.sql), {
      account: 'acct_q',
      type: 'order.created',
      resourceId: 'ord_1',
      object: { id: 'ord_1' },
    });
    expect((await depth()).due).toBe(0); // the cached answer
    now += 1000;
    const fresh = await depth();
    expect(fresh.due).toBe(1);
    expect(fresh.oldestDueSeconds).toBeGreaterThanOrEqual(0);
  });

  it('counts the dead deliveries of every partition of the history, and only those', async () => {
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: 'acct_dead', url: 'http://127.0.0.1:1024/dead' },
      { allowPrivateDestinations: true },
    );
    const before = (await queueDepth(pgDb(db))()).dead;
    // Days of their own (partitions made for them) and the default partition (a day with none).
    await db.sql`select holdfast_history_ensure('holdfast_deliveries', '2031-01-01', '2031-01-03', 1)`;
    const rows: [string, string][] = [
      ['dead', '2031-01-01T10:00:00Z'],
      ['dead', '2031-01-02T10:00:00Z'],
      ['succeeded', '2031-01-02T11:00:00Z'],
      ['dead', '2032-06-01T10:00:00Z'],
    ];
    for (const [i, [status, at]] of rows.entries()) {
      await db.sql`
        insert into holdfast_deliveries (id, account_id, event_id, endpoint_id, event_type, status, attempt_count, created_at, updated_at)
        values (${`dlv_dead_${i}`}, 'acct_dead', ${`evt_dead_${i}`}, ${endpoint.id}, 'order.created', ${status}, 8, ${at}, ${at})`;
    }
    expect((await queueDepth(pgDb(db))()).dead).toBe(before + 3);
    // The other tests of this file count from an empty history.
    await db.sql`delete from holdfast_deliveries where account_id = 'acct_dead'`;
  });
});

describe('deliveryMetrics', () => {
  it('registers attempts by outcome (zero from the start) and the queue gauges, read at scrape', async () => {
    const registry = new Registry();
    const metrics = deliveryMetrics({ db: pgDb(db), registers: [registry], prefix: 'test_' });
    metrics.onAttempt({
      deliveryId: 'dlv_1',
      endpointId: 'we_1',
      eventType: 'order.created',
      status: 503,
      outcome: 'retry',
      latencyMs: 120,
    });
    const text = await registry.metrics();
    expect(text).toContain('test_delivery_attempts_total{outcome="failed"} 1');
    expect(text).toContain('test_delivery_attempts_total{outcome="succeeded"} 0');
    expect(text).toContain('test_delivery_attempt_duration_seconds_count{outcome="failed"} 1');
    expect(text).toMatch(/test_deliveries_due \d+/);
    expect(text).toContain('test_deliveries_dead 0');
    expect(text).toContain('# TYPE test_endpoint_concurrency_limit gauge');
    expect(text).not.toContain('dlv_1');
  });

  it('maps a retried failure to failed', () => {
    expect(attemptOutcome('retry')).toBe('failed');
    expect(attemptOutcome('disabled')).toBe('disabled');
  });
});
