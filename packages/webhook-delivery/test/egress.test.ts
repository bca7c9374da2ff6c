import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, connect as netConnect } from 'node:net';
import { createSecureContext } from 'node:tls';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { createSigner } from '@holdfast/webhook-signer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AttemptReply, sendAttempt } from '../src/attempt';
import { deliveryDispatchers, type EgressOptions } from '../src/egress';
import {
  checkEgress,
  createDeliveryWorker,
  createEndpoint,
  EgressError,
  egressSourceRanges,
  enqueueEvent,
  migrations,
  notifyAccounts,
} from '../src/index';
import type { Resolver } from '../src/ssrf';
import { endPools, pgDb } from './fixtures/db';
import { cert, key } from './fixtures/egress-tls';

afterAll(endPools);

const signer = createSigner({ secrets: `whsec_${Buffer.alloc(32, 7).toString('base64')}` });

/** A receiver that records which address each request came from; answers 302 to `/redirect`. */
async function receiver(host: string) {
  const from: string[] = [];
  const paths: string[] = [];
  const server = createHttpServer((req, res) => {
    from.push(req.socket.remoteAddress ?? '');
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
        return;
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return { port: (server.address() as AddressInfo).port, from, paths, close: () => closeServer(server) };
}

function closeServer(server: Server | ReturnType<typeof createNetServer>): Promise<void> {
  return new Promise((r) => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close(() => r());
  });
}

/** A small HTTP CONNECT proxy, like Smokescreen without its policy: records each CONNECT target, then pipes. */
async function connectProxy() {
  const targets: string[] = [];
  const server = createHttpServer((_req, res) => {
    res.statusCode = 405;
    res.end();
  });
  server.on('connect', (req, client, head) => {
    targets.push(req.url ?? '');
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    if (!match?.[1] || !match[2]) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const upstream = netConnect({ host: match[1], port: Number(match[2]) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    close: () => closeServer(server),
  };
}

async function attempt(
  url: string,
  egress: EgressOptions,
  destination: { allowPrivateDestinations: boolean; resolve?: Resolver },
  endpointId = 'ep_1',
): Promise<AttemptReply> {
  const dispatchers = deliveryDispatchers({ ...destination, connectTimeoutMs: 5000, egress });
  await dispatchers.ready;
  try {
    return await sendAttempt(
      { url, payload: '{"id":"evt_1"}', eventId: 'evt_1', endpointId, signer, started: 0, now: () => 0 },
      { destination, dispatchers, timeoutMs: 5000 },
    );
  } finally {
    await dispatchers.close();
  }
}

/** IPv6 loopback is usable here: a socket can listen on ::1. */
async function hasIPv6Loopback(): Promise<boolean> {
  const server = createNetServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}
const ipv6 = await hasIPv6Loopback();

describe('egress settings', () => {
  it('publishes bound addresses as /32 or /128 and proxy ranges as given', () => {
    expect(egressSourceRanges({ addresses: ['127.0.0.3', '0:0:0:0:0:0:0:1'] })).toEqual([
      '127.0.0.3/32',
      '::1/128',
    ]);
    expect(egressSourceRanges({ proxy: 'http://proxy:4750', ranges: ['203.0.113.0/24'] })).toEqual([
      '203.0.113.0/24',
    ]);
    expect(egressSourceRanges(undefined)).toEqual([]);
  });

  it('refuses at start an address that cannot be bound, naming it', async () => {
    // 192.0.2.1 (documentation range) is on no interface of a test machine.
    await expect(checkEgress({ addresses: ['127.0.0.3', '192.0.2.1'] })).rejects.toThrow(
      new EgressError('egress address 192.0.2.1 cannot be bound: EADDRNOTAVAIL'),
    );
    await expect(checkEgress({ addresses: ['127.0.0.3'] })).resolves.toBeUndefined();
  });

  it('refuses malformed settings and both modes at once', () => {
    const both = { addresses: ['127.0.0.3'], proxy: 'http://127.0.0.1:1', ranges: ['203.0.113.0/24'] };
    expect(() => egressSourceRanges(both as unknown as EgressOptions)).toThrow(/not both/);
    expect(() => egressSourceRanges({ addresses: ['not-an-ip'] })).toThrow(/"not-an-ip"/);
    expect(() => egressSourceRanges({ addresses: [] })).toThrow(/empty/);
    expect(() => egressSourceRanges({ proxy: 'https://p:1', ranges: ['203.0.113.0/24'] })).toThrow(/http:/);
    expect(() => egressSourceRanges({ proxy: 'http://p:1', ranges: ['203.0.113.0/33'] })).toThrow(/CIDR/);
    expect(() => egressSourceRanges({ proxy: 'http://p:1', ranges: [] })).toThrow(/ranges/);
  });
});

describe('bound egress addresses', () => {
  let hook: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    hook = await receiver('127.0.0.1');
  });
  afterAll(() => hook.close());

  it('every delivery leaves from the bound address', async () => {
    for (let i = 0; i < 5; i += 1) {
      const reply = await attempt(
        `http://127.0.0.1:${hook.port}/hook`,
        { addresses: ['127.0.0.3'] },
        { allowPrivateDestinations: true },
        `ep_${i}`,
      );
      expect(reply.status).toBe(204);
    }
    expect(hook.from).toEqual(Array(5).fill('127.0.0.3'));
  });

  it('the same address for an endpoint while the list is unchanged, spread across endpoints', async () => {
    const addresses = ['127.0.0.3', '127.0.0.4', '127.0.0.5'];
    const sent = async (endpointId: string) => {
      hook.from.length = 0;
      await attempt(
        `http://127.0.0.1:${hook.port}/`,
        { addresses },
        { allowPrivateDestinations: true },
        endpointId,
      );
      return hook.from[0];
    };
    const endpoints = ['ep_a', 'ep_b', 'ep_c', 'ep_d', 'ep_e', 'ep_f'];
    const first: Array<string | undefined> = [];
    for (const id of endpoints) first.push(await sent(id));
    const again: Array<string | undefined> = [];
    for (const id of endpoints) again.push(await sent(id));
    expect(again).toEqual(first);
    for (const address of first) expect(addresses).toContain(address);
    // Six endpoints on three addresses: these ids happen to use more than one (the hash is fixed).
    expect(new Set(first).size).toBeGreaterThan(1);
    // Reordering the list moves nobody.
    hook.from.length = 0;
    await attempt(
      `http://127.0.0.1:${hook.port}/`,
      { addresses: [...addresses].reverse() },
      { allowPrivateDestinations: true },
      'ep_a',
    );
    expect(hook.from[0]).toBe(first[0]);
  });

  // Skipped where the machine has no IPv6 loopback (no socket can listen on ::1).
  it.skipIf(!ipv6)('leaves from the bound IPv6 loopback', async () => {
    const hook6 = await receiver('::1');
    try {
      // Both families listed: an IPv6 destination leaves from the IPv6 address.
      const reply = await attempt(
        `http://[::1]:${hook6.port}/hook`,
        { addresses: ['127.0.0.3', '::1'] },
        { allowPrivateDestinations: true },
      );
      expect(reply.status).toBe(204);
      expect(hook6.from).toEqual(['::1']);
    } finally {
      await hook6.close();
    }
  });

  it('keeps the SSRF rules: a private destination, a redirect, a rebinding name', async () => {
    hook.from.length = 0;
    const privateDestination = await attempt(
      `http://127.0.0.1:${hook.port}/`,
      { addresses: ['127.0.0.3'] },
      { allowPrivateDestinations: false },
    );
    expect(privateDestination).toMatchObject({ forbidden: true, status: undefined });

    const redirect = await attempt(
      `http://127.0.0.1:${hook.port}/redirect`,
      { addresses: ['127.0.0.3'] },
      { allowPrivateDestinations: true },
    );
    expect(redirect.status).toBe(302);
    expect(hook.paths.at(-1)).toBe('/redirect');

    // Public at check time, loopback at connection time: refused by the connection's own check.
    let calls = 0;
    const rebinding: Resolver = async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    const rebound = await attempt(
      `http://rebind.example.test:${hook.port}/`,
      { addresses: ['127.0.0.3'] },
      { allowPrivateDestinations: false, resolve: rebinding },
    );
    expect(calls).toBe(2);
    expect(rebound.error).toMatch(/forbidden/);
    expect(hook.from).toEqual(['127.0.0.3']);
  });
});

describe('an egress proxy', () => {
  let hook: Awaited<ReturnType<typeof receiver>>;
  let proxy: Awaited<ReturnType<typeof connectProxy>>;
  beforeAll(async () => {
    hook = await receiver('127.0.0.1');
    proxy = await connectProxy();
  });
  afterAll(async () => {
    await hook.close();
    await proxy.close();
  });
  beforeEach(() => {
    proxy.targets.length = 0;
    hook.from.length = 0;
  });
  const via = (): EgressOptions => ({ proxy: proxy.url, ranges: ['203.0.113.0/24'] });
  const names: Resolver = async (host) => {
    if (host === 'hooks.example.test') return ['127.0.0.1'];
    throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };

  it('CONNECTs to the checked address literal, never the host name', async () => {
    const reply = await attempt(`http://hooks.example.test:${hook.port}/hook`, via(), {
      allowPrivateDestinations: true,
      resolve: names,
    });
    expect(reply.status).toBe(204);
    expect(proxy.targets).toEqual([`127.0.0.1:${hook.port}`]);
    expect(hook.from).toEqual(['127.0.0.1']);
  });

  it('sends TLS through the tunnel with the host name as SNI and checks the certificate', async () => {
    const sni: string[] = [];
    const context = createSecureContext({ key, cert });
    const secure = createHttpsServer(
      {
        key,
        cert,
        SNICallback: (name, done) => {
          sni.push(name);
          done(null, context);
        },
      },
      (_req, res) => {
        res.statusCode = 204;
        res.end();
      },
    );
    secure.on('tlsClientError', () => {});
    await new Promise<void>((r) => secure.listen(0, '127.0.0.1', () => r()));
    const port = (secure.address() as AddressInfo).port;
    try {
      const reply = await attempt(`https://hooks.example.test:${port}/hook`, via(), {
        allowPrivateDestinations: true,
        resolve: names,
      });
      // The certificate is self-signed: checked, and refused.
      expect(reply.status).toBeUndefined();
      expect(reply.error).toMatch(/self[- ]signed/i);
      expect(proxy.targets).toEqual([`127.0.0.1:${port}`]);
      expect(sni).toEqual(['hooks.example.test']);
    } finally {
      await closeServer(secure);
    }
  });

  it('keeps the SSRF rules: a private destination, a redirect, a rebinding name', async () => {
    const privateDestination = await attempt(`http://127.0.0.1:${hook.port}/`, via(), {
      allowPrivateDestinations: false,
    });
    expect(privateDestination.forbidden).toBe(true);

    const redirect = await attempt(`http://hooks.example.test:${hook.port}/redirect`, via(), {
      allowPrivateDestinations: true,
      resolve: names,
    });
    expect(redirect.status).toBe(302);
    expect(proxy.targets).toEqual([`127.0.0.1:${hook.port}`]);

    let calls = 0;
    const rebinding: Resolver = async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    const rebound = await attempt(`http://rebind.example.test:${hook.port}/`, via(), {
      allowPrivateDestinations: false,
      resolve: rebinding,
    });
    expect(calls).toBe(2);
    expect(rebound.error).toMatch(/forbidden/);
    // The proxy was never asked to go anywhere for the rebinding name.
    expect(proxy.targets).toEqual([`127.0.0.1:${hook.port}`]);
    expect(hook.from).toEqual(['127.0.0.1']);
  });
});

describe('the worker with egress', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  });
  afterAll(() => db.close());

  it('delivers every event from the bound address', async () => {
    const hook = await receiver('127.0.0.1');
    const options = { allowPrivateDestinations: true };
    for (const n of [1, 2, 3]) {
      await createEndpoint(
        fromPostgres(db.sql),
        { account: 'acct_egress', url: `http://127.0.0.1:${hook.port}/${n}`, eventTypes: ['order.created'] },
        options,
      );
    }
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account: 'acct_egress',
        type: 'order.created',
        resourceId: 'ord_1',
        object: {},
      }),
    );
    const worker = createDeliveryWorker({
      db: pgDb(db),
      unsafeTimeoutMs: 5000,
      ...options,
      egress: { addresses: ['127.0.0.3'] },
      onError: () => {},
    });
    expect(await worker.runOnce()).toBe(3);
    await worker.stop();
    expect(hook.from).toEqual(['127.0.0.3', '127.0.0.3', '127.0.0.3']);
    await hook.close();
  });

  it('refuses to deliver from an address it cannot bind', async () => {
    const errors: unknown[] = [];
    const worker = createDeliveryWorker({
      db: pgDb(db),
      allowPrivateDestinations: true,
      egress: { addresses: ['192.0.2.1'] },
      onError: (error) => errors.push(error),
    });
    await expect(worker.runOnce()).rejects.toThrow(/192\.0\.2\.1 cannot be bound/);
    await worker.stop();
  });
});

describe('notifyAccounts', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  });
  afterAll(() => db.close());

  it('writes one notification per account, tied to no endpoint, and tells the notifier', async () => {
    const told: string[] = [];
    const written = await notifyAccounts(
      fromPostgres(db.sql),
      {
        accounts: ['acct_1', 'acct_1:live', 'acct_2', 'acct_1'],
        type: 'webhook_source_addresses_changed',
        message: 'Webhooks are now sent from 127.0.0.4/32 (before: 127.0.0.3/32).',
        notifier: { notify: (account) => void told.push(account) },
      },
      { now: () => Date.parse('2026-11-27T10:00:00.000Z') },
    );
    expect(written).toHaveLength(3);
    expect(told.sort()).toEqual(['acct_1', 'acct_1:live', 'acct_2']);
    const rows =
      await db.sql`select account_id, type, endpoint_id, created_at from holdfast_notifications order by account_id`;
    expect(rows.map((r) => [r.account_id, r.type, r.endpoint_id])).toEqual([
      ['acct_1', 'webhook_source_addresses_changed', null],
      ['acct_1:live', 'webhook_source_addresses_changed', null],
      ['acct_2', 'webhook_source_addresses_changed', null],
    ]);
    expect(written[0]).toMatchObject({ endpoint: null, createdAt: '2026-11-27T10:00:00.000Z' });
    expect(await notifyAccounts(fromPostgres(db.sql), { accounts: [], type: 't', message: 'm' })).toEqual([]);
  });
});
