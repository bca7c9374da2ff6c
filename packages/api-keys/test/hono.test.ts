import { onProblem } from '@holdfast/problem-details/hono';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { type ApiKeyEnv, apiKeyAuth, requireScope } from '../src/hono';
import { type FailureLimit as CoreFailureLimit, createKey, memoryApiKeyStore } from '../src/index';
import { generateKey } from '../src/key';

type FailureLimit = CoreFailureLimit<Context>;

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
