import type { Db } from '@holdfast/db';

const ACCOUNTS = 'select distinct account from holdfast_api_keys order by account';

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
export async function keyAccounts(db: Db): Promise<string[]> {
  const rows = await db.query<{ account: string }>(ACCOUNTS);
  return rows.map((row) => row.account);
}
