import type { Db } from '@holdfast/db';
import { qualify } from '@holdfast/db/migrate';

/** Options of {@link keyAccounts}. */
export interface KeyAccountsOptions {
  /** The schema the package's tables were migrated into; absent: the connection's `search_path`. */
  readonly schema?: string;
}

const accountsStatement = (table: (name: string) => string) =>
  `select distinct account from ${table('holdfast_api_keys')} order by account`;

/**
 * Every account that holds at least one key in `holdfast_api_keys`, in code-point order: for
 * work that concerns each account (a notice to all of them) and for a first start that issues a
 * key only while none exists.
 *
 * @example
 * ```ts
 * import { fromPg } from '@holdfast/db/pg';
 * if ((await keyAccounts(fromPg(pool))).length === 0) console.log(await createKey(store, 'acct_demo', ['*']));
 * ```
 */
export async function keyAccounts(db: Db, options: KeyAccountsOptions = {}): Promise<string[]> {
  const rows = await db.query<{ account: string }>(accountsStatement(qualify(options.schema)));
  return rows.map((row) => row.account);
}
