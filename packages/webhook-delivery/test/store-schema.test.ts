import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Db } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { realPostgres } from '@holdfast/pg/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEndpoint,
  deleteEndpoint,
  endpointConcurrency,
  endpointStats,
  enqueueEvent,
  eventWrites,
  getDelivery,
  getEndpoint,
  getEvent,
  listAttempts,
  migrations,
  notifyAccounts,
  purgeDeliveryHistory,
  recoverDeliveries,
  replayDelivery,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from '../src/index';

// The sender's tables in a schema of the adopter's choosing, used from a node-postgres pool whose
// search_path does not include it: every function names its tables by the schema, and the
// functions and the trigger the migrations create find their tables whatever the caller's path.

const packageDir = new URL('../', import.meta.url);
const files = readdirSync(new URL('migrations/', packageDir)).filter((name) => name.endsWith('.sql'));

describe('migrations()', () => {
  it('are the migrations/ files, in order, as plain SQL, ids prefixed with the package name', () => {
    const list = migrations();
    expect(files.length).toBeGreaterThan(0);
    expect(list.map((m) => m.id)).toEqual(
      [...files].sort().map((name) => `@holdfast/webhook-delivery/${name.replace(/\.sql$/, '')}`),
    );
    for (const [i, migration] of list.entries())
      expect(migration.sql).toBe(readFileSync(new URL(`migrations/${files[i]}`, packageDir), 'utf8'));
  });

  it('ship in the tarball, and the README lists exactly these files', () => {
    const manifest = JSON.parse(readFileSync(new URL('package.json', packageDir), 'utf8')) as {
      files: string[];
    };
    expect(manifest.files).toContain('migrations');
    const readme = readFileSync(new URL('README.md', packageDir), 'utf8');
    const listed = [...readme.matchAll(/`migrations\/(\d{3}_[a-z0-9_]+\.sql)`/g)].map((m) => m[1]);
    expect(new Set(listed)).toEqual(new Set(files));
  });

  it('refuse a schema that is no lower-case identifier', () => {
    for (const schema of ['Webhooks', 'a"b', '', 'x-y'])
      expect(() => migrations({ schema })).toThrow(TypeError);
  });
});

describe.skipIf(!realPostgres)('the sender in a schema of its own (PostgreSQL)', () => {
  const schema = `wd_${randomBytes(5).toString('hex')}`;
  const account = 'acct_schema';
  const options = { schema };
  const destination = { ...options, allowPrivateDestinations: true };
  let pool: pg.Pool;
  let db: Db;

  beforeAll(async () => {
    // `public` only: unqualified names would not find the sender's tables.
    pool = new pg.Pool({
      connectionString: process.env.DATABASE_URL,
      max: 2,
      options: '-c search_path=public',
    });
    db = fromPg(pool);
    await migrate(db, migrations(options));
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  });

  it('puts every table in the schema, none on the search_path', async () => {
    const rows = await db.query<{ table_name: string }>(
      'select table_name from information_schema.tables where table_schema = $1::text order by 1',
      [schema],
    );
    expect(rows.map((r) => r.table_name)).toContain('holdfast_deliveries');
    const [visible] = await db.query<{ found: string | null }>(
      "select to_regclass('holdfast_deliveries')::text as found",
    );
    expect(visible?.found).toBeNull();
  });

  it('runs every function on the schema: endpoints, the outbox, filters, ordering, replay, recover, stats, purge', async () => {
    const { endpoint, secret } = await createEndpoint(
      db,
      {
        account,
        url: 'http://127.0.0.1:1024/a',
        ordering: 'per-resource',
        // `$or` makes the filter function call itself: by its bare name, in its own schema.
        filter: { $or: [{ 'data.object.total': { $gte: 10 } }, { 'data.object.vip': true }] },
      },
      destination,
    );
    expect(secret).toMatch(/^whsec_/);
    expect((await getEndpoint(db, { account, id: endpoint.id }, options))?.ordering).toBe('per-resource');
    expect((await endpointConcurrency(db, [endpoint.id], options)).get(endpoint.id)).toEqual({
      current: 4,
      max: 4,
    });

    const first = await enqueueEvent(
      db,
      { account, type: 'order.created', resourceId: 'ord_1', object: { id: 'ord_1', total: 12 } },
      options,
    );
    const skipped = await enqueueEvent(
      db,
      { account, type: 'order.created', resourceId: 'ord_1', object: { id: 'ord_1', total: 1 } },
      options,
    );
    const writes = eventWrites(
      { account, type: 'order.updated', resourceId: 'ord_1', object: { id: 'ord_1', vip: true } },
      options,
    );
    await db.query(`with ${writes.ctes} select 1`, writes.values);
    expect([first.sequence, skipped.sequence]).toEqual([1, 2]);
    expect((await getEvent(db, { account, id: writes.id }, options))?.sequence).toBe(3);

    const q = (table: string) => `"${schema}".${table}`;
    const deliveries = await db.query<{ id: string; event_id: string; due: boolean }>(
      `select id, event_id, next_attempt_at is not null as due from ${q('holdfast_deliveries')} order by ordering_pos`,
    );
    // The filter let two of three through; the second of the line waits for the first.
    expect(deliveries.map((d) => [d.event_id, d.due])).toEqual([
      [first.id, true],
      [writes.id, false],
    ]);
    const [head, second] = deliveries;
    // The head finishes: the trigger (on a connection whose path lacks the schema) makes the next due.
    await db.query(`update ${q('holdfast_deliveries')} set status = 'dead' where id = $1::text`, [head?.id]);
    expect((await getDelivery(db, { account, id: second?.id ?? '' }, options))?.nextAttemptAt).not.toBeNull();

    await db.query(
      `insert into ${q('holdfast_delivery_attempts')} (id, delivery_id, account_id, endpoint_id, status, latency_ms, created_at)
       values ('att_1', $1::text, $2::text, $3::text, 500, 20, now())`,
      [head?.id, account, endpoint.id],
    );
    expect((await listAttempts(db, { account, id: head?.id ?? '' }, options))?.map((a) => a.id)).toEqual([
      'att_1',
    ]);
    expect(await listAttempts(db, { account, id: second?.id ?? '' }, options)).toEqual([]);
    const stats = await endpointStats(db, { account, endpointId: endpoint.id, window: '24h' }, options);
    expect(stats?.buckets.at(-1)?.dead).toBe(1);

    // Replayed, the dead head joins the back of its line (behind the second, still unfinished).
    const replayed = await replayDelivery(db, { account, id: head?.id ?? '' }, options);
    expect(replayed).toMatchObject({ status: 'pending', nextAttemptAt: null });
    await db.query(`update ${q('holdfast_deliveries')} set status = 'dead'`);
    expect(
      await recoverDeliveries(db, { account, endpointId: endpoint.id, since: Date.now() - 60_000 }, options),
    ).toBe(2);

    const test = await sendTestEvent(
      db,
      { account, endpointId: endpoint.id, type: 'order.created', object: { id: 'ord_example' } },
      options,
    );
    expect(test?.event.test).toBe(true);
    const notes = await notifyAccounts(db, { accounts: [account], type: 'note', message: 'm' }, options);
    expect(notes).toHaveLength(1);

    const updated = await updateEndpoint(db, { account, id: endpoint.id, description: 'd' }, destination);
    expect(updated?.description).toBe('d');
    expect((await rotateSecret(db, { account, id: endpoint.id }, options))?.secret).not.toBe(secret);
    expect(await deleteEndpoint(db, { account, id: endpoint.id }, options)).toBe(true);
    expect(await getEndpoint(db, { account, id: endpoint.id }, options)).toBeUndefined();

    // Finished history, 40 days on: every partition of it dropped, whole.
    await db.query(`update ${q('holdfast_deliveries')} set status = 'succeeded'`);
    const later = () => Date.now() + 40 * 86_400_000;
    expect(await purgeDeliveryHistory(db, { ...options, now: later })).toBeGreaterThan(0);
    for (const table of ['holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts'])
      expect(await db.query(`select 1 from ${q(table)}`)).toHaveLength(0);
  });
});
