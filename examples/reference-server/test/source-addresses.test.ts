import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { rawHttp } from '@holdfast/node-bridge/raw-http';
import { connect } from '@holdfast/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { parseReceiverSecrets } from '../src/receivers';
import { announceSourceAddresses } from '../src/source-addresses';
import {
  ACCOUNT,
  api,
  createStorage,
  eventually,
  KEYS,
  startTestServer,
  type TestServer,
  type TestStorage,
} from './webhooks-harness';

// The published source addresses (GET /webhook-source-addresses): stored, kept across restarts
// while the list is the same, moved with a notification to every account when it changes, and
// every webhook leaves from the published address.

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A receiver on 127.0.0.1 that records the address each request came from. */
async function addressRecorder() {
  const from: string[] = [];
  const server = createServer((req, res) => {
    from.push(req.socket.remoteAddress ?? '');
    req.resume();
    req.on('end', () => {
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    from,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const published = async (url: string) => {
  const response = await fetch(new URL('/webhook-source-addresses', url));
  return {
    response,
    body: (await response.json()) as { addresses: string[]; configured: boolean; updatedAt: string },
  };
};

const changeNotices = async (url: string, key: string) => {
  const list = await api(url, 'GET', '/v1/notifications?limit=100', { key });
  expect(list.status).toBe(200);
  return (list.body.data as Array<{ type: string; message: string }>).filter(
    (n) => n.type === 'webhook_source_addresses_changed',
  );
};

describe('published webhook source addresses', () => {
  let storage: TestStorage;
  let server: TestServer | undefined;
  beforeAll(async () => {
    storage = await createStorage();
  });
  afterAll(async () => {
    await server?.close();
    await storage.drop();
  });

  it('publishes the bound address, keeps its date across restarts, and notifies every account when it changes', async () => {
    server = await startTestServer({ HOLDFAST_EGRESS_ADDRESSES: '127.0.0.3' }, storage);
    const first = await published(server.url);
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(first.body).toEqual({
      addresses: ['127.0.0.3/32'],
      configured: true,
      updatedAt: expect.any(String),
    });
    expect(first.body.updatedAt).toMatch(RFC3339_MS);

    // Every webhook leaves from 127.0.0.3.
    const hook = await addressRecorder();
    try {
      const created = await api(server.url, 'POST', '/v1/webhook-endpoints', {
        body: { url: hook.url, eventTypes: ['order.created'] },
      });
      expect(created.status).toBe(201);
      for (const total of [100, 200, 300]) {
        expect(
          (await api(server.url, 'POST', '/v1/orders', { body: { currency: 'EUR', total } })).status,
        ).toBe(201);
      }
      await eventually(async () => (hook.from.length >= 3 ? true : undefined), 15_000, 'three deliveries');
      expect(hook.from).toEqual(['127.0.0.3', '127.0.0.3', '127.0.0.3']);
    } finally {
      await hook.close();
    }
    await server.close();

    // The same list: the same date, nobody notified.
    server = await startTestServer({ HOLDFAST_EGRESS_ADDRESSES: '127.0.0.3' }, storage);
    expect((await published(server.url)).body).toEqual(first.body);
    expect(await changeNotices(server.url, KEYS.all)).toEqual([]);
    await server.close();

    // Another list: a new date, one notification per account naming both lists.
    server = await startTestServer({ HOLDFAST_EGRESS_ADDRESSES: '127.0.0.4, 127.0.0.3' }, storage);
    const changed = await published(server.url);
    expect(changed.body.addresses).toEqual(['127.0.0.3/32', '127.0.0.4/32']);
    expect(changed.body.updatedAt).toMatch(RFC3339_MS);
    expect(changed.body.updatedAt).not.toBe(first.body.updatedAt);
    for (const key of [KEYS.all, KEYS.other]) {
      const notices = await changeNotices(server.url, key);
      expect(notices).toHaveLength(1);
      expect(notices[0]?.message).toContain('they were 127.0.0.3/32;');
      expect(notices[0]?.message).toContain('they are now 127.0.0.3/32, 127.0.0.4/32');
    }
    await server.close();
    server = undefined;
  });

  it('publishes an empty list when nothing is configured, declared in the OpenAPI document, no key needed', async () => {
    const plain = await startTestServer();
    try {
      const { response, body } = await published(plain.url);
      expect(response.status).toBe(200);
      expect(body).toEqual({
        addresses: [],
        configured: false,
        updatedAt: expect.stringMatching(RFC3339_MS),
      });
      const document = await api(plain.url, 'GET', '/openapi.json', { key: null });
      const operation = document.body.paths['/webhook-source-addresses']?.get;
      expect(operation?.security).toEqual([]);
      expect(Object.keys(operation?.responses ?? {})).toContain('200');
      const docs = await (await fetch(new URL('/docs', plain.url))).text();
      expect(docs).toContain('/webhook-source-addresses');
    } finally {
      await plain.close();
    }
  });

  it('warns in production when nothing is configured, and says what it publishes otherwise', async () => {
    const fresh = await createStorage();
    const db = fresh.database ?? (await connect({ databaseUrl: fresh.databaseUrl ?? '', max: 1 }));
    try {
      // The tables, as a start creates them.
      const boot = await startTestServer({}, fresh);
      await boot.close();
      const lines: Array<{ level: string; text: string }> = [];
      const log = {
        info: (...args: unknown[]) => void lines.push({ level: 'info', text: String(args.at(-1)) }),
        warn: (...args: unknown[]) => void lines.push({ level: 'warn', text: String(args.at(-1)) }),
      };
      await announceSourceAddresses(
        { db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) },
        { egress: undefined, role: 'all', production: true },
        Date.now,
        log,
      );
      expect(lines).toEqual([{ level: 'warn', text: expect.stringContaining('none configured') }]);
      lines.length = 0;
      await announceSourceAddresses(
        { db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) },
        { egress: { addresses: ['127.0.0.3'] }, role: 'all', production: true },
        Date.now,
        log,
      );
      expect(lines[0]).toEqual({ level: 'info', text: 'webhook source addresses published: 127.0.0.3/32' });
      // A list that cannot be bound stops the start, naming the address.
      await expect(
        announceSourceAddresses(
          { db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) },
          { egress: { addresses: ['192.0.2.1'] }, role: 'all', production: false },
          Date.now,
          log,
        ),
      ).rejects.toThrow(/192\.0\.2\.1 cannot be bound/);
    } finally {
      if (!fresh.database) await db.close();
      await fresh.drop();
    }
  });

  it('refuses both addresses and a proxy, and a proxy without ranges', () => {
    expect(() =>
      loadConfig({ HOLDFAST_EGRESS_ADDRESSES: '127.0.0.3', HOLDFAST_EGRESS_PROXY: 'http://127.0.0.1:4750' }),
    ).toThrow(/cannot both be set/);
    expect(() => loadConfig({ HOLDFAST_EGRESS_PROXY: 'http://127.0.0.1:4750' })).toThrow(
      /HOLDFAST_EGRESS_RANGES/,
    );
    expect(() => loadConfig({ HOLDFAST_EGRESS_RANGES: '203.0.113.0/24' })).toThrow(/HOLDFAST_EGRESS_PROXY/);
    expect(() => loadConfig({ HOLDFAST_EGRESS_ADDRESSES: '127.0.0.3,nope' })).toThrow(/"nope"/);
    expect(
      loadConfig({
        HOLDFAST_EGRESS_PROXY: 'http://127.0.0.1:4750',
        HOLDFAST_EGRESS_RANGES: '203.0.113.0/24, 2001:db8::/48',
      }).egress,
    ).toEqual({ proxy: 'http://127.0.0.1:4750', ranges: ['203.0.113.0/24', '2001:db8::/48'] });
  });
});

describe('a receiver with sources', () => {
  const SECRET = `whsec_${Buffer.from('holdfast-sources-test-secret-32b').toString('base64')}`;
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
        open: { account: ACCOUNT, secrets: [SECRET] },
        local: { account: ACCOUNT, secrets: [SECRET], sources: ['127.0.0.3/32', '::1/128'] },
        guarded: { account: ACCOUNT, secrets: [SECRET], sources: ['203.0.113.0/24'] },
      }),
    });
  });
  afterAll(() => server.close());

  /** A signed delivery sent raw from `from`; `complete: false` sends a tenth of the body and stops. */
  async function deliver(name: string, from: string, id: string, complete = true) {
    const at = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id, type: 'subscription.updated', data: { object: { id: 'sub_1' } } });
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const signature = `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`;
    const conversation = await rawHttp(() => Number(new URL(server.url).port)).open(from);
    conversation.socket.write(
      [
        `POST /hooks/${name} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Content-Type: application/json',
        `webhook-id: ${id}`,
        `webhook-timestamp: ${at}`,
        `webhook-signature: ${signature}`,
        `Content-Length: ${complete ? Buffer.byteLength(body) : 100_000}`,
        '',
        complete ? body : body.slice(0, 10),
      ].join('\r\n'),
    );
    const answer = await conversation.waitFor(/\r\n\r\n[\s\S]*\}/);
    conversation.socket.destroy();
    return answer;
  }

  it('accepts its sources, refuses other addresses with 403 webhook_source_forbidden before the body is read', async () => {
    expect(await deliver('local', '127.0.0.3', 'msg_src_1')).toMatch(/^HTTP\/1\.1 200 /);
    const refused = await deliver('local', '127.0.0.1', 'msg_src_2');
    expect(refused).toMatch(/^HTTP\/1\.1 403 /);
    expect(refused).toContain('"code":"webhook_source_forbidden"');
    expect(refused).toContain('https://holdfast.dev/problems/webhook_source_forbidden');
    // The body never finishes: the answer comes anyway.
    expect(await deliver('guarded', '127.0.0.1', 'msg_src_3', false)).toMatch(/^HTTP\/1\.1 403 /);
    // Without sources, any address.
    expect(await deliver('open', '127.0.0.2', 'msg_src_4')).toMatch(/^HTTP\/1\.1 200 /);
    const page = await fetch(new URL('/problems/webhook_source_forbidden', server.url));
    expect(page.status).toBe(200);
  });

  it('refuses a receiver whose sources are not CIDR ranges, at start', () => {
    expect(() =>
      parseReceiverSecrets(
        JSON.stringify({ bad: { account: ACCOUNT, secrets: [SECRET], sources: ['203.0.113.0/33'] } }),
      ),
    ).toThrow(/HOLDFAST_RECEIVER_SECRETS is malformed \(bad\.sources\.0: a CIDR range/);
    expect(
      parseReceiverSecrets(
        JSON.stringify({ ok: { account: ACCOUNT, secrets: [SECRET], sources: ['2001:db8::/32'] } }),
      ).get('ok')?.sources,
    ).toEqual(['2001:db8::/32']);
  });
});
