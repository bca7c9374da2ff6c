import type { Db } from '@holdfast/db';
import { qualify } from '@holdfast/db/migrate';
import { opaqueId } from '@holdfast/ids';
import { hashKey } from './key';
import type { ApiKeyStore } from './store';

/**
 * The statements, once, as text with `$n` values, for the table under `schema`: every driver
 * sends these. The scopes travel as one `text[]` parameter with an explicit cast, so no driver
 * has to guess the array's type (an untyped array on a connection that has run nothing else
 * arrives as `text`).
 */
function statements(schema: string | undefined) {
  const keys = qualify(schema)('holdfast_api_keys');
  return {
    find: `select id, account, scopes from ${keys} where key_hash = $1::text`,
    save: `insert into ${keys} (id, key_hash, key_prefix, account, scopes)
  values ($1::text, $2::text, $3::text, $4::text, $5::text[])
  on conflict (key_hash) do update set account = excluded.account, scopes = excluded.scopes`,
  };
}

/** Options of {@link dbApiKeyStore}. */
export interface ApiKeyStoreOptions {
  /**
   * The schema `migrations({ schema })` put the table in. Absent: the unqualified name, found
   * through the connection's `search_path`.
   */
  readonly schema?: string;
}

/**
 * Keys in `holdfast_api_keys` (see `migrations`) on any driver, through a `Db` of
 * `@holdfast/db`: the service keeps its keys on its own pool, whichever driver that is. Ids are
 * `key_` opaque ids.
 *
 * @example
 * ```ts
 * import { fromPg } from '@holdfast/db/pg';
 * const store = dbApiKeyStore(fromPg(pool), { schema: 'holdfast' });
 * const key = await createKey(store, 'acct_1', ['orders:read'], 'live');
 * ```
 */
export function dbApiKeyStore(db: Db, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const sql = statements(options.schema);
  return {
    async find(hash) {
      const [row] = await db.query<{ id: string; account: string; scopes: string[] }>(sql.find, [hash]);
      return row;
    },
    async save({ key, account, scopes }) {
      await db.query(sql.save, [opaqueId('key'), hashKey(key), key.slice(0, 12), account, [...scopes]]);
    },
  };
}
