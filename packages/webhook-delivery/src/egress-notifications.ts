import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/ids';
import type { Notifier } from './health';
import type { DeliveryOptions } from './options';
import { pgArray } from './pg-array';
import { type Notification, type Row, toNotification } from './rows';
import { storeStatements } from './sql/store';

/** A notification for many accounts at once, tied to no endpoint. */
export interface AccountsNotice {
  /** Tenants to notify (each gets one notification), as `account_id` of the other tables. */
  readonly accounts: readonly string[];
  /** Such as `webhook_source_addresses_changed`. */
  readonly type: string;
  readonly message: string;
  /** Told about each notification written. */
  readonly notifier?: Notifier;
}

/**
 * Writes one notification to each account, in one statement (on a pool or a transaction), for
 * news that concerns every account rather than one endpoint: the addresses webhooks are sent
 * from changed, say. They are listed with the others (`toNotification` maps their rows).
 *
 * @example
 * ```ts
 * await notifyAccounts(db, {
 *   accounts: ['acct_1', 'acct_1:live'],
 *   type: 'webhook_source_addresses_changed',
 *   message: 'Webhooks are now sent from 203.0.113.7/32 (before: 198.51.100.7/32).',
 * });
 * ```
 */
export async function notifyAccounts(
  db: Db,
  notice: AccountsNotice,
  options: DeliveryOptions = {},
): Promise<Notification[]> {
  const accounts = [...new Set(notice.accounts)];
  if (accounts.length === 0) return [];
  const ids = accounts.map(() => opaqueId('ntf'));
  const at = new Date((options.now ?? Date.now)()).toISOString();
  const rows = await db.query<Row>(storeStatements(options.schema).notifyAccounts, [
    notice.type,
    notice.message,
    at,
    pgArray(ids),
    pgArray(accounts),
  ]);
  const notifications = rows.map(toNotification);
  if (notice.notifier) {
    for (const [i, notification] of notifications.entries()) {
      const account = rows[i]?.account_id;
      if (typeof account === 'string') await notice.notifier.notify(account, notification);
    }
  }
  return notifications;
}
