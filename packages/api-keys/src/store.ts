import { generateKey, hashKey, type KeyMode } from './key';

/** A key as a store holds it: never the key itself, only its hash. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly account: string;
  readonly scopes: readonly string[];
}

/** A key to store: the key (hashed before it is kept), its account and scopes. */
export interface NewApiKey {
  readonly key: string;
  readonly account: string;
  readonly scopes: readonly string[];
}

/**
 * Where keys live: `dbApiKeyStore(db)` (PostgreSQL, any driver) or {@link memoryApiKeyStore}.
 * Your own store implements these two; `save` keeps {@link hashKey} of the key, never the key.
 */
export interface ApiKeyStore {
  /** The key whose {@link hashKey} is `hash`, or `undefined`. */
  find(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Stores `key`; saving the same key again changes nothing but its account and scopes. */
  save(key: NewApiKey): Promise<void>;
}

/**
 * Keys in this process only: for tests and examples.
 *
 * @example
 * ```ts
 * const store = memoryApiKeyStore();
 * await store.save({ key: 'hf_test_0123456789abcdef', account: 'acct_1', scopes: ['*'] });
 * ```
 */
export function memoryApiKeyStore(): ApiKeyStore {
  const keys = new Map<string, ApiKeyRecord>();
  let next = 0;
  return {
    find: async (hash) => keys.get(hash),
    save: async ({ key, account, scopes }) => {
      const hash = hashKey(key);
      next += 1;
      keys.set(hash, { id: keys.get(hash)?.id ?? `key_${next}`, account, scopes: [...scopes] });
    },
  };
}

/**
 * Creates a key for `account` with `scopes`, stores it and returns it: the only time it is
 * visible.
 *
 * @example
 * ```ts
 * const key = await createKey(memoryApiKeyStore(), 'acct_1', ['orders:read'], 'live');
 * ```
 */
export async function createKey(
  store: ApiKeyStore,
  account: string,
  scopes: readonly string[],
  mode: KeyMode = 'test',
  options: { readonly prefix?: string } = {},
): Promise<string> {
  const key = generateKey(mode, options);
  await store.save({ key, account, scopes });
  return key;
}
