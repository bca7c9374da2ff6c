import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Database } from '@holdfast/pg';
import { realPostgres } from '@holdfast/pg/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Child, startServerProcess } from './process-harness';
import { createStorage, type TestStorage } from './webhooks-harness';

// Issue 28, finding 7: a database error reached stderr whole, with the failing row (body bytes,
// tenant, webhook id). No log line may carry body bytes, secrets or keys: the server process runs
// as `npm start` runs it, with info logs on, two statements fail on a constraint whose detail
// ("Failing row contains (...)") holds a marker from the request body, and the marker, the API key
// and the receiver secret never appear in what the process printed, while the failures do.

const MARKER = `bodymarker${randomUUID().slice(0, 8)}`;
const KEY = 'hf_test_logPrivacyKey000000000000000001';
const SECRET = `whsec_${Buffer.from('holdfast-log-privacy-test-secret').toString('base64')}`;

let storage: TestStorage | undefined;
let dataDir: string | undefined;
let server: Child;
let db: Database;

beforeAll(async () => {
  // PGlite in a directory, so this process can join the server's database through its socket.
  let env: Record<string, string>;
  if (realPostgres) {
    storage = await createStorage();
    env = storage.env;
  } else {
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-logs-'));
    env = { DATABASE_URL: '', HOLDFAST_DATA_DIR: dataDir };
  }
  server = await startServerProcess({
    ...env,
    HOLDFAST_LOG_LEVEL: 'info',
    HOLDFAST_ROLE: 'api',
    HOLDFAST_API_KEYS: JSON.stringify([{ key: KEY, account: 'acct_logs', scopes: ['*'] }]),
    HOLDFAST_RECEIVER_SECRETS: JSON.stringify({ billing: { account: 'acct_logs', secrets: [SECRET] } }),
  });
  db = realPostgres
    ? await connect({ databaseUrl: storage?.databaseUrl, max: 1 })
    : await connect({ dataDir, whenHeld: 'join' });
  // Constraints that fail on the marker: PostgreSQL puts the whole row in the error's detail.
  await db.sql.unsafe(`
    alter table holdfast_orders add constraint holdfast_test_marker
      check (description is null or position('${MARKER}' in description) = 0);
    alter table holdfast_webhook_inbox add constraint holdfast_test_marker
      check (position('${MARKER}' in convert_from(body, 'UTF8')) = 0);`);
}, 200_000);

afterAll(async () => {
  await db?.close();
  await server?.stop();
  await storage?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('logs database failures without their row, the body, the key or the secret', async () => {
  const order = await fetch(new URL('/v1/orders', server.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ currency: 'EUR', total: 100, description: `card 4242 ${MARKER}` }),
  });
  expect(order.status).toBe(500);
  const body = JSON.stringify({ type: 'order.updated', note: MARKER });
  const id = `msg_${randomUUID()}`;
  const at = Math.floor(Date.now() / 1000);
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const hook = await fetch(new URL('/hooks/billing', server.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`,
    },
    body,
  });
  expect(hook.status).toBe(500);
  // Logs are written in batches (within 100 ms) and flushed on exit.
  await server.stop();
  const printed = server.output.join('');
  // The failures were logged, with what identifies them: the SQLSTATE and the constraint.
  expect(printed.match(/request failed/g)?.length).toBe(2);
  expect(printed).toContain('23514');
  expect(printed).toContain('holdfast_test_marker');
  for (const secret of [MARKER, KEY, SECRET, SECRET.slice('whsec_'.length), 'Failing row']) {
    expect(printed).not.toContain(secret);
  }
}, 120_000);
