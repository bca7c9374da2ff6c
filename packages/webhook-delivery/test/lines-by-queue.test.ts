import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import type postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createEndpoint,
  enqueueEvent,
  maintainDeliveryHistory,
  migrations,
  replayDelivery,
} from '../src/index';
import { resumeWaitingLines } from '../src/lease';
import { endPools, pgQueue } from './fixtures/db';

afterAll(endPools);

// The outbox write, a replay, the ordering trigger and the repair of waiting lines read an ordered
// line in the queue and reach each delivery in its own partition: none of them waits on a lock
// of an older history partition (an operator moving or repacking last week's, say), and each
// keeps the line's order.

const DAY = 86_400_000;
const ACCOUNT = 'acct_lines';
const options = { allowPrivateDestinations: true };
let db: TestDatabase;
/** The operator's connection, holding old partitions' locks. */
let operator: { sql: postgres.Sql; close(): Promise<void> } | undefined;

const day = (ms: number) =>
  new Date(Math.floor(ms / DAY) * DAY).toISOString().slice(0, 10).replaceAll('-', '');

describe.runIf(realPostgres)('ordered lines beside a locked history partition (PostgreSQL)', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
    // Partitions from five days back, as a deployment that has run for a while has.
    await maintainDeliveryHistory(fromPostgres(db.sql), { now: () => Date.now() - 5 * DAY, aheadDays: 7 });
    operator = await db.connectAgain(1);
  });
  afterAll(async () => {
    await operator?.close();
    await db.close();
  });
  beforeEach(async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
  });

  /** Runs `body` while another session holds ACCESS EXCLUSIVE on the history's partitions of three days ago. */
  async function whileOldPartitionsLocked<T>(body: () => Promise<T>): Promise<T> {
    const old = day(Date.now() - 3 * DAY);
    const tables = ['holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts'].map(
      (t) => `${t}_p${old}`,
    );
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const taken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = operator?.sql.begin(async (tx) => {
      await tx.unsafe(`lock table ${tables.join(', ')} in access exclusive mode`);
      locked();
      await held;
    });
    await taken;
    try {
      return await body();
    } finally {
      release();
      await holder;
    }
  }

  /** Each write in a transaction of its own that gives up on a lock after 2 s (55P03), rather than waiting. */
  const impatient = <T>(body: (tx: postgres.TransactionSql) => Promise<T>) =>
    db.sql.begin(async (tx) => {
      await tx`set local lock_timeout = '2s'`;
      return body(tx);
    }) as Promise<T>;

  async function line(resource: string) {
    return db.sql<{ id: string; createdAt: Date; status: string; due: boolean }[]>`
      select d.id, d.created_at as "createdAt", d.status, d.next_attempt_at is not null as due
      from holdfast_deliveries d join holdfast_events e on e.id = d.event_id
      where e.resource_id = ${resource} order by d.ordering_pos`;
  }

  const event = (resourceId: string) => ({
    account: ACCOUNT,
    type: 'order.updated',
    resourceId,
    object: { id: resourceId },
  });

  it('an event to ordered and unordered endpoints is written, in line, with an old partition locked', async () => {
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:9999/o', ordering: 'per-resource' },
      options,
    );
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: 'http://127.0.0.1:9999/u' }, options);
    await enqueueEvent(fromPostgres(db.sql), event('ord_1'));
    await whileOldPartitionsLocked(async () => {
      await impatient((tx) => enqueueEvent(fromPostgres(tx), event('ord_1')));
      await impatient((tx) => enqueueEvent(fromPostgres(tx), event('ord_2')));
    });
    expect(await line('ord_1')).toHaveLength(4);
    // Per endpoint, the first of the line is due and the second waits behind it; unordered, both due.
    const [one] = await db.sql<{ due: boolean[]; unordered: boolean[] }[]>`
      select array_agg(d.next_attempt_at is not null order by d.ordering_pos) filter (where d.ordering_key is not null) as due,
             array_agg(d.next_attempt_at is not null order by d.id) filter (where d.ordering_key is null) as unordered
      from holdfast_deliveries d join holdfast_events e on e.id = d.event_id where e.resource_id = 'ord_1'`;
    expect(one?.due).toEqual([true, false]);
    expect(one?.unordered).toEqual([true, true]);
    expect((await line('ord_2')).map((d) => d.due)).toEqual([true, true]);
  });

  it("a line's next delivery falls due when its head finishes, and a waiting head is resumed, with an old partition locked", async () => {
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:9999/o', ordering: 'per-resource' },
      options,
    );
    for (let i = 0; i < 3; i += 1) await enqueueEvent(fromPostgres(db.sql), event('ord_3'));
    const [head, second, third] = await line('ord_3');
    expect([head?.due, second?.due, third?.due]).toEqual([true, false, false]);
    // The head succeeds (as an outcome writes it): the ordering trigger makes the second due.
    await whileOldPartitionsLocked(() =>
      impatient(
        (tx) =>
          tx`update holdfast_deliveries set status = 'succeeded' where id = ${head?.id ?? ''} and created_at = ${head?.createdAt ?? null}`,
      ),
    );
    expect((await line('ord_3')).map((d) => d.due)).toEqual([true, true, false]);
    // The second left waiting with nothing ahead of it, as when its head finished unseen.
    await db.sql`update holdfast_deliveries set next_attempt_at = null where id = ${second?.id ?? ''} and created_at = ${second?.createdAt ?? null}`;
    expect((await line('ord_3')).map((d) => d.due)).toEqual([true, false, false]);
    expect(await whileOldPartitionsLocked(() => impatient(() => resumeWaitingLines(pgQueue(db))))).toBe(1);
    expect((await line('ord_3')).map((d) => d.due)).toEqual([true, true, false]);
  });

  it('a replayed delivery rejoins the back of its line, with an old partition locked', async () => {
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:9999/o', ordering: 'per-resource' },
      options,
    );
    await enqueueEvent(fromPostgres(db.sql), event('ord_4'));
    await enqueueEvent(fromPostgres(db.sql), event('ord_4'));
    const [first] = await line('ord_4');
    await db.sql`update holdfast_deliveries set status = 'dead' where id = ${first?.id ?? ''}`;
    await whileOldPartitionsLocked(async () => {
      const replayed = await impatient((tx) =>
        replayDelivery(fromPostgres(tx), { account: ACCOUNT, id: first?.id ?? '' }),
      );
      expect(replayed).toBeDefined();
    });
    // Behind the second, which its head's death made due: the replay waits.
    expect((await line('ord_4')).map((d) => [d.id === first?.id, d.status, d.due])).toEqual([
      [false, 'pending', true],
      [true, 'pending', false],
    ]);
  });
});
