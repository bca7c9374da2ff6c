import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDestination, forbiddenAddress, pinnedAgent, type Resolver } from '../src/ssrf';

// A resolver for the names of the table below: what an attacker's DNS would answer.
const records: Record<string, string[]> = {
  'loopback.attacker.test': ['127.0.0.1'],
  'private.attacker.test': ['10.1.2.3'],
  'metadata.attacker.test': ['169.254.169.254'],
  'cgnat.attacker.test': ['100.64.1.1'],
  'v6loop.attacker.test': ['::1'],
  'mapped.attacker.test': ['::ffff:192.168.0.1'],
  'mixed.attacker.test': ['93.184.216.34', '10.0.0.1'],
  'ula.attacker.test': ['fd12:3456::1'],
  'compat.attacker.test': ['::169.254.169.254'],
  'sixtofour.attacker.test': ['2002:a9fe:a9fe::1'],
  'teredo.attacker.test': ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
  'docs.attacker.test': ['2001:db8::5'],
  'public.example.test': ['93.184.216.34'],
  'public6.example.test': ['2606:4700:4700::1111'],
};
const resolve: Resolver = async (host) => {
  const found = records[host.toLowerCase()];
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

// Destination forms that must all be refused (CONTRACT section 6; issue 7 asks for >= 30).
const forbidden: string[] = [
  'http://127.0.0.1/hook',
  'http://127.1/hook',
  'http://2130706433/hook', // decimal
  'http://0x7f000001/hook', // hex
  'http://0177.0.0.1/hook', // octal
  'http://0x7f.0.0.1/hook',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/', // cloud metadata
  'http://100.64.0.1/', // CGNAT
  'http://0.0.0.0/',
  'http://0/',
  'http://255.255.255.255/', // broadcast
  'http://224.0.0.1/', // multicast
  'http://[::1]/',
  'http://[::]/',
  'http://[::ffff:127.0.0.1]/', // IPv4-mapped
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[fe80::1]/', // link-local
  'http://[fc00::1]/', // unique local
  'http://[fd00:ec2::254]/',
  'http://[64:ff9b::a00:1]/', // NAT64 of 10.0.0.1
  'http://[64:ff9b::7f00:1]/',
  'http://[ff02::1]/', // multicast
  'http://[2002:7f00:1::]/', // 6to4
  'http://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost/',
  'http://printer.local/',
  'http://db.internal/',
  'http://Metadata.Google.Internal./',
  'http://loopback.attacker.test/',
  'http://private.attacker.test/',
  'http://metadata.attacker.test/',
  'http://cgnat.attacker.test/',
  'http://v6loop.attacker.test/',
  'http://mapped.attacker.test/',
  'http://mixed.attacker.test/',
  'http://ula.attacker.test/',
  'http://user:pass@public.example.test/',
  'ftp://public.example.test/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'not a url',
];

// CONTRACT section 10: forms that an "is it unicast?" check let through. Refused at
// registration and, below, at connect time.
const embedded: string[] = [
  'https://[::169.254.169.254]/x', // IPv4-compatible (::/96) of the metadata address
  'http://[::127.0.0.1]/',
  'http://[::a00:1]/', // ::10.0.0.1
  'http://[::ffff:0:a9fe:a9fe]/', // SIIT (::ffff:0:0/96)
  'http://[2002:a9fe:a9fe::1]/', // 6to4 of 169.254.169.254
  'http://[2002:c0a8:101::1]/', // 6to4 of 192.168.1.1
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', // Teredo, client 127.0.0.1 (inverted)
  'http://[2001:0:a00:1::5]/', // Teredo, server 10.0.0.1
  'http://[2001:db8::1]/', // documentation
  'http://[3fff::1]/', // documentation (RFC 9637)
  'http://192.0.2.10/', // documentation
  'http://198.51.100.7/',
  'http://203.0.113.9/',
  'http://198.18.0.1/', // benchmarking
  'http://198.19.255.1/',
  'http://[2001:2::1]/', // benchmarking
  'http://[100::1]/', // discard
  'http://compat.attacker.test/',
  'http://sixtofour.attacker.test/',
  'http://teredo.attacker.test/',
  'http://docs.attacker.test/',
];
forbidden.push(...embedded);

describe('checkDestination', () => {
  it.each(forbidden)('refuses %s', async (url) => {
    const check = await checkDestination(url, { resolve });
    expect(check.ok, JSON.stringify(check)).toBe(false);
  });

  it('has at least 30 forbidden forms in its table', () => {
    expect(forbidden.length).toBeGreaterThanOrEqual(30);
  });

  // Naming the range ("resolves to an address in the loopback range") would let a tenant map
  // internal DNS one name at a time: an address refusal says only "not a public address".
  const RANGE_WORDS =
    /loopback|private|link-?local|unique ?local|multicast|broadcast|reserved|carrier|cgnat|unspecified|documentation|benchmark|orchid|6to4|teredo|nat64|ipv4-(compatible|mapped)|range|\/\d/i;

  it('says "not a public address" of a name, never the address or the range it resolved to', async () => {
    for (const host of Object.keys(records).filter((name) => name.endsWith('.attacker.test'))) {
      const check = await checkDestination(`http://${host}/`, { resolve });
      expect(check.ok, host).toBe(false);
      const reason = check.ok ? '' : check.reason;
      for (const address of records[host] ?? []) expect(reason).not.toContain(address);
      expect(reason, host).toBe('the host name resolves to an address that is not a public address');
      expect(reason).not.toMatch(RANGE_WORDS);
    }
  });

  it('says "not a public address" of every refused address literal, naming no range', async () => {
    const literals = forbidden.filter((url) => {
      const host = URL.canParse(url) ? new URL(url).hostname.replace(/^\[|\]$/g, '') : '';
      return /^[\d.]+$|:/.test(host);
    });
    expect(literals.length).toBeGreaterThan(30);
    for (const url of literals) {
      const check = await checkDestination(url, { resolve });
      expect(check.ok ? '' : check.reason, url).toBe('the host is not a public address');
    }
  });

  it('still names the rule broken when it is not about the address', async () => {
    const reasons = await Promise.all(
      ['http://localhost/', 'ftp://public.example.test/', 'http://public.example.test:22/'].map(
        async (url) => {
          const check = await checkDestination(url, { resolve });
          return check.ok ? '' : check.reason;
        },
      ),
    );
    expect(reasons).toEqual([
      '"localhost" names a local or internal host',
      'only http and https URLs are allowed',
      'only ports 80, 443 and 1024 to 65535 are allowed',
    ]);
  });

  it.each([
    'https://[2002:5db8:d822::1]/', // 6to4 of a public address
    'https://[2001:0:4136:e378:8000:63bf:a247:27dd]/', // Teredo, both addresses public
    'https://public.example.test/hooks',
    'http://public6.example.test/',
    'https://93.184.216.34/x',
    'https://[2606:4700:4700::1111]/',
  ])('accepts %s', async (url) => {
    const check = await checkDestination(url, { resolve });
    expect(check.ok).toBe(true);
  });

  it('accepts a name that does not resolve yet (checked again at each attempt)', async () => {
    const check = await checkDestination('https://not-yet.example.test/', { resolve });
    expect(check).toMatchObject({ ok: true, resolved: false });
  });

  it('requires https in production', async () => {
    expect((await checkDestination('http://public.example.test/', { resolve, production: true })).ok).toBe(
      false,
    );
    expect((await checkDestination('https://public.example.test/', { resolve, production: true })).ok).toBe(
      true,
    );
  });

  it('allows ports 80, 443 and 1024 to 65535 only, naming the rule, private hosts allowed or not', async () => {
    const allowed = (port: number) => port === 80 || port === 443 || (port >= 1024 && port <= 65535);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 1100 }), fc.integer({ min: 0, max: 65535 })),
        fc.constantFrom('http', 'https'),
        fc.boolean(),
        async (port, scheme, allowPrivateDestinations) => {
          const host = allowPrivateDestinations ? '127.0.0.1' : '93.184.216.34';
          const check = await checkDestination(`${scheme}://${host}:${port}/in`, {
            resolve,
            allowPrivateDestinations,
          });
          expect(check.ok, `${scheme} port ${port}`).toBe(allowed(port));
          if (!check.ok) expect(check.reason).toBe('only ports 80, 443 and 1024 to 65535 are allowed');
        },
      ),
      { numRuns: 300 },
    );
    // The scheme's default port, implicit or written out, and each edge of the range.
    for (const [url, ok] of [
      ['https://93.184.216.34/x', true],
      ['http://93.184.216.34/x', true],
      ['https://93.184.216.34:443/x', true],
      ['http://93.184.216.34:443/x', true],
      ['https://93.184.216.34:80/x', true],
      ['https://93.184.216.34:0/x', false],
      ['https://93.184.216.34:1/x', false],
      ['https://93.184.216.34:22/x', false],
      ['https://93.184.216.34:1023/x', false],
      ['https://93.184.216.34:1024/x', true],
      ['https://93.184.216.34:5432/x', true],
      ['https://93.184.216.34:65535/x', true],
      ['https://93.184.216.34:65536/x', false],
    ] as const) {
      expect((await checkDestination(url, { resolve })).ok, url).toBe(ok);
    }
  });

  it('lets private destinations through only when told to', async () => {
    expect((await checkDestination('http://127.0.0.1:1024/', { allowPrivateDestinations: true })).ok).toBe(
      true,
    );
  });

  it('lets through a private URL under an allowed prefix and nothing beside it', async () => {
    const options = { privateUrlPrefixes: ['http://127.0.0.1:3000/demo/', 'http://10.0.0.1:3000/no-slash'] };
    for (const [url, ok] of [
      ['http://127.0.0.1:3000/demo/receiver/ok', true],
      ['HTTP://127.0.0.1:3000/demo/', true],
      ['http://127.0.0.1:3000/demo', false],
      ['http://127.0.0.1:3000/demo/../v1/orders', false],
      ['http://127.0.0.1:3000/demo%2F../v1', false],
      ['http://127.0.0.1:3001/demo/receiver/ok', false],
      ['http://127.0.0.2:3000/demo/receiver/ok', false],
      ['http://user@127.0.0.1:3000/demo/receiver/ok', false],
      // A prefix must end in `/`: one that does not allows nothing.
      ['http://10.0.0.1:3000/no-slash', false],
      ['http://10.0.0.1:3000/no-slash/x', false],
    ] as const) {
      expect((await checkDestination(url, { ...options, resolve })).ok, url).toBe(ok);
    }
  });
});

describe('forbiddenAddress', () => {
  it.each(['127.0.0.1', '10.9.9.9', '::ffff:169.254.1.1', '64:ff9b::1.2.3.4', '2001:db8::1', '192.0.2.1'])(
    'refuses %s',
    (address) => {
      expect(forbiddenAddress(address)).toBeDefined();
    },
  );
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700::1'])('allows %s', (address) => {
    expect(forbiddenAddress(address)).toBeUndefined();
  });
});

describe('pinnedAgent', () => {
  let port = 0;
  const server = createServer((_req, res) => {
    res.statusCode = 302;
    res.setHeader('location', 'http://127.0.0.1/secret');
    res.end();
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses at connect time a name that resolves to a forbidden address (DNS rebinding)', async () => {
    let calls = 0;
    // First answer public (passes a registration check), then loopback: the connection-time check still refuses.
    const rebinding: Resolver = async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    expect((await checkDestination(`http://rebind.example.test:${port}/`, { resolve: rebinding })).ok).toBe(
      true,
    );
    const agent = pinnedAgent({ resolve: rebinding });
    const refused = await request(`http://rebind.example.test:${port}/`, { dispatcher: agent }).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    // The message reaches the tenant's attempt log: no range there either.
    expect(refused).toBe(
      'destination forbidden: the host name resolves to an address that is not a public address',
    );
    await agent.close();
  });

  it.each(embedded.filter((url) => url.includes('[') || /\/\/\d/.test(url)))(
    'refuses at connect time a name resolving to the address of %s',
    async (url) => {
      const address = new URL(url).hostname.replace(/^\[|\]$/g, '');
      const agent = pinnedAgent({ resolve: async () => [address] });
      await expect(
        request(`http://pinned.example.test:${port}/`, { dispatcher: agent, method: 'POST', body: '{}' }),
      ).rejects.toThrow(/forbidden/);
      await agent.close();
    },
  );

  it('connects to a name of an allowed private prefix and refuses other names at that address', async () => {
    const loopback: Resolver = async () => ['127.0.0.1'];
    const agent = pinnedAgent({
      resolve: loopback,
      privateUrlPrefixes: [`http://dev.example.test:${port}/demo/`],
    });
    const response = await request(`http://dev.example.test:${port}/demo/x`, {
      dispatcher: agent,
      method: 'POST',
      body: '{}',
    });
    expect(response.statusCode).toBe(302);
    await response.body.dump();
    await expect(
      request(`http://other.example.test:${port}/demo/x`, { dispatcher: agent, method: 'POST', body: '{}' }),
    ).rejects.toThrow(/forbidden/);
    await agent.close();
  });

  it('never follows redirects', async () => {
    const agent = pinnedAgent({ allowPrivateDestinations: true });
    const response = await request(`http://127.0.0.1:${port}/`, {
      dispatcher: agent,
      method: 'POST',
      body: '{}',
    });
    expect(response.statusCode).toBe(302);
    await response.body.dump();
    await agent.close();
  });
});
