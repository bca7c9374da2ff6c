import type { Db } from '@holdfast/db';
import { opaqueId } from './id';
import { hashKey } from './key';
import type { ApiKeyStore } from './store';

// The statements, once, as text with $n values: every driver sends these. The scopes travel as
// one text[] parameter with an explicit cast, so no driver has to guess the array's type (an
// untyped postgres.js `sql.array` on a fresh connection arrived as text).
const FIND = 'select id, account, scopes from holdfast_api_keys where key_hash = $1::text';
const SAVE = `insert into holdfast_api_keys (id, key_hash, key_prefix, account, scopes)
  values ($1::text, $2::text, $3::text, $4::text, $5::text[])
  on conflict (key_hash) do update set account = excluded.account, scopes = excluded.scopes`;

/**
 * Keys in `holdfast_api_keys` (the `migrations` of `/postgres`) on any driver, through a
 * {@link Db} of `@holdfast/db`: a service on node-postgres, Drizzle, Kysely or Prisma keeps its
 * keys on its own pool. Ids are `key_` opaque ids.
 *
 * @example
 * ```ts
 * import { fromPg } from '@holdfast/db/pg';
 * const store = dbApiKeyStore(fromPg(pool));
 * const key = await createKey(store, 'acct_1', ['orders:read'], 'live');
 * ```
 */
export function dbApiKeyStore(db: Db): ApiKeyStore {
  return {
    async find(hash) {
      const [row] = await db.query<{ id: string; account: string; scopes: string[] }>(FIND, [hash]);
      return row;
    },
    async save({ key, account, scopes }) {
      await db.query(SAVE, [opaqueId('key'), hashKey(key), key.slice(0, 12), account, [...scopes]]);
    },
  };
}
