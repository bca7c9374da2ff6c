import { onProblem } from '@holdfast/problem-details/hono';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { type ApiKeyEnv, apiKeyAuth, type FailureLimit, requireScope } from '../src/hono';
import {
  createKey,
  generateKey,
  hashKey,
  hasScope,
  isLive,
  memoryApiKeyStore,
  parseBearer,
  scopeFor,
  tenantOf,
} from '../src/index';

describe('keys', () => {
  it('generates <prefix>_<mode>_ and 32 base64url characters, never the same twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateKey('live')));
    expect(keys.size).toBe(1000);
    for (const key of keys) expect(key).toMatch(/^hf_live_[A-Za-z0-9_-]{32}$/);
    expect(generateKey('test', { prefix: 'acme' })).toMatch(/^acme_test_/);
  });

  it('hashes with SHA-256 (FIPS 180-4 vector for "abc")', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('parses Bearer credentials case-insensitively and refuses anything else', () => {
    expect(parseBearer('bearer hf_test_0123456789abcdef ')).toEqual({
      key: 'hf_test_0123456789abcdef',
      mode: 'test',
    });
    expect(parseBearer('Bearer hf_live_0123456789abcdef')?.mode).toBe('live');
    expect(parseBearer('Bearer hf_test_short')).toBeUndefined();
    expect(parseBearer('Bearer sk_test_0123456789abcdef')).toBeUndefined();
    expect(parseBearer('Basic hf_test_0123456789abcdef')).toBeUndefined();
    expect(parseBearer('Bearer a.b_test_0123456789abcdef', { prefix: 'a.b' })?.mode).toBe('test');
    expect(parseBearer('Bearer axb_test_0123456789abcdef', { prefix: 'a.b' })).toBeUndefined();
  });

  it('round-trips every generated key through parseBearer', () => {
    fc.assert(
      fc.property(fc.constantFrom('live' as const, 'test' as const), (mode) => {
        const key = generateKey(mode);
        expect(parseBearer(`Bearer ${key}`)).toEqual({ key, mode });
      }),
    );
  });
});

describe('tenants and scopes', () => {
  it('keeps live and test apart', () => {
    fc.assert(
      fc.property(fc.string(), (account) => {
        fc.pre(!isLive(account));
        expect(isLive(tenantOf(account, 'live'))).toBe(true);
        expect(tenantOf(account, 'test')).toBe(account);
        expect(tenantOf(account, 'live')).not.toBe(tenantOf(account, 'test'));
      }),
    );
  });

  it.each([
    [['*'], 'orders:write', true],
    [['orders:write'], 'orders:read', true],
    [['orders:read'], 'orders:write', false],
    [['payments:write'], 'orders:read', false],
  ])('%j holds %s: %s', (scopes, scope, held) => {
    expect(hasScope({ scopes: new Set(scopes) }, scope)).toBe(held);
  });

  it('maps methods to read and write scopes', () => {
    expect(scopeFor('orders', 'GET')).toBe('orders:read');
    expect(scopeFor('orders', 'HEAD')).toBe('orders:read');
    expect(scopeFor('orders', 'DELETE')).toBe('orders:write');
  });
});

function app(options: { failures?: FailureLimit; now?: () => number } = {}) {
  const store = memoryApiKeyStore();
  const looked: string[] = [];
  const counting = {
    find: async (hash: string) => {
      looked.push(hash);
      return store.find(hash);
    },
    save: store.save,
  };
  const hono = new Hono<ApiKeyEnv>();
  hono.onError(onProblem());
  hono.use(apiKeyAuth({ store: counting, realm: 'test', ...options }));
  hono.get('/orders', requireScope('orders:read', { realm: 'test' }), (c) =>
    c.json(c.get('principal').account),
  );
  return { hono, store, looked };
}

const get = (hono: Hono<ApiKeyEnv>, key?: string) =>
  hono.request('/orders', key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } });

describe('apiKeyAuth', () => {
  it('answers 401 with an RFC 6750 challenge: bare without credentials, invalid_token otherwise', async () => {
    const { hono } = app();
    const none = await get(hono);
    expect(none.status).toBe(401);
    expect(none.headers.get('WWW-Authenticate')).toBe('Bearer realm="test"');
    expect((await none.json()).code).toBe('unauthenticated');
    for (const key of ['nonsense', generateKey()]) {
      const bad = await get(hono, key);
      expect(bad.status).toBe(401);
      expect(bad.headers.get('WWW-Authenticate')).toBe('Bearer realm="test", error="invalid_token"');
    }
  });

  it('resolves a key to its tenant and mode, and caches it', async () => {
    const { hono, store, looked } = app();
    const live = await createKey(store, 'acct_1', ['*'], 'live');
    const test = await createKey(store, 'acct_1', ['*']);
    expect(await (await get(hono, live)).json()).toBe('acct_1:live');
    expect(await (await get(hono, test)).json()).toBe('acct_1');
    await get(hono, live);
    expect(looked).toHaveLength(2);
  });

  it('remembers an unknown key for a second, then looks again', async () => {
    let now = 0;
    const { hono, store, looked } = app({ now: () => now });
    const key = generateKey();
    expect((await get(hono, key)).status).toBe(401);
    expect((await get(hono, key)).status).toBe(401);
    expect(looked).toHaveLength(1);
    await store.save({ key, account: 'acct_2', scopes: ['orders:read'] });
    now += 1001;
    expect((await get(hono, key)).status).toBe(200);
  });

  it('answers 403 insufficient_scope naming the scope', async () => {
    const { hono, store } = app();
    const key = await createKey(store, 'acct_1', ['payments:write']);
    const response = await get(hono, key);
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toBe(
      'Bearer realm="test", error="insufficient_scope", scope="orders:read"',
    );
  });

  it('spends the failure limit on failures only, and checks it before a lookup', async () => {
    const spent: string[] = [];
    let checks = 0;
    const failures: FailureLimit = {
      check: async () => {
        checks += 1;
      },
      spend: async (c) => {
        spent.push(c.req.header('authorization') ?? '');
      },
    };
    const { hono, store } = app({ failures });
    const key = await createKey(store, 'acct_1', ['*']);
    await get(hono);
    await get(hono, 'nonsense');
    await get(hono, generateKey());
    expect(spent).toHaveLength(3);
    await get(hono, key);
    await get(hono, key);
    expect(spent).toHaveLength(3);
    expect(checks).toBe(4); // the cached second request with the known key checks nothing
  });
});
