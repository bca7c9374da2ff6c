import { createHmac, randomUUID } from 'node:crypto';
import { connect } from '@holdfast/pg';
import fc from 'fast-check';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  createStorage,
  startTestServer,
  type TestServer,
  type TestStorage,
} from './webhooks-harness';

// Issue 28, finding 7: a signed JSON null on /hooks/{name} was a 500 (NOT NULL in the inbox), so
// the sender retried it forever. Any body the verifier accepts is now stored (an object, and null,
// a number, a string, an array, with U+0000 and lone surrogates as U+FFFD in the jsonb view): a
// 2xx, the exact bytes kept, never a 500.

const SECRET = `whsec_${Buffer.from('holdfast-inbound-any-json-secret').toString('base64')}`;

let storage: TestStorage;
let server: TestServer;
let sql: postgres.Sql;
let closeSql: () => Promise<void>;

beforeAll(async () => {
  storage = await createStorage();
  server = await startTestServer(
    { HOLDFAST_RECEIVER_SECRETS: JSON.stringify({ billing: { account: ACCOUNT, secrets: [SECRET] } }) },
    storage,
  );
  if (storage.database) {
    sql = storage.database.sql;
    closeSql = async () => {};
  } else {
    const db = await connect({ databaseUrl: storage.databaseUrl, max: 1 });
    sql = db.sql;
    closeSql = () => db.close();
  }
}, 120_000);

afterAll(async () => {
  await closeSql?.();
  await server?.close();
});

/** Signs like a Standard Webhooks sender, written independently of the packages. */
function sign(id: string, at: number, body: string): string {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`;
}

async function deliver(body: string) {
  const id = `msg_${randomUUID()}`;
  const at = Math.floor(Date.now() / 1000);
  const response = await fetch(new URL('/hooks/billing', server.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': sign(id, at, body),
    },
    body,
  });
  return { id, response };
}

async function stored(webhookId: string) {
  const [row] = await sql<{ body: Uint8Array; payload: unknown; type: string | null }[]>`
    select body, payload, type from holdfast_webhook_inbox where scope = 'billing' and webhook_id = ${webhookId}`;
  return row;
}

/** What the jsonb view holds: the value with U+0000 and lone surrogates as U+FFFD. */
function storable(value: unknown): unknown {
  if (typeof value === 'string')
    return value
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
      .replaceAll('\u0000', '\uFFFD');
  if (Array.isArray(value)) return value.map(storable);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k) as string, storable(v)]));
  }
  return value;
}

describe('signed bodies that are not objects', () => {
  it('stores null, a number, a string, an array and true: 200, never a 500', async () => {
    for (const body of ['null', '42', '"text"', '[1,null]', 'true', '{}']) {
      const { id, response } = await deliver(body);
      expect(response.status, body).toBe(200);
      const row = await stored(id);
      expect(Buffer.from(row?.body ?? []).toString('utf8')).toBe(body);
      expect(row?.payload).toEqual(JSON.parse(body));
    }
  });

  it('property: any signed JSON value is answered below 500, and a 2xx is stored exactly', async () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'é', '\u0000', '\uD800', '\uDC00', '\u{1F600}', '"', '\\'),
    });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        text,
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    await fc.assert(
      fc.asyncProperty(json, async (value) => {
        const body = JSON.stringify(value);
        const { id, response } = await deliver(body);
        expect(response.status).toBeLessThan(500);
        if (response.status >= 300) return;
        const row = await stored(id);
        expect(Buffer.from(row?.body ?? []).toString('utf8')).toBe(body);
        expect(row?.payload).toEqual(JSON.parse(JSON.stringify(storable(value))));
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
