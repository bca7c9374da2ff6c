import type { ISql as Sql } from 'postgres';
import type { Notifier } from './health';
import { opaqueId } from './id';
import { pgArray } from './pg-array';
import { type Notification, toNotification } from './rows';

/** A notification for many accounts at once, tied to no endpoint. */
export interface AccountsNotice {
  /** Tenants to notify (each gets one notification), as `account_id` of the other tables. */
  readonly accounts: readonly string[];
  /** Such as `webhook_source_addresses_changed`. */
  readonly type: string;
  readonly message: string;
  readonly now?: () => number;
  /** Told about each notification written. */
  readonly notifier?: Notifier;
}

/**
 * Writes one notification to each account, in one statement (a pool or a transaction), for news that concerns every
 * account rather than one endpoint: the addresses webhooks are sent from changed, say. They are
 * listed with the others (`holdfast_notifications`, `toNotification`).
 *
 * @example
 * ```ts
 * await notifyAccounts(sql, {
 *   accounts: ['acct_1', 'acct_1:live'],
 *   type: 'webhook_source_addresses_changed',
 *   message: 'Webhooks are now sent from 203.0.113.7/32 (before: 198.51.100.7/32).',
 * });
 * ```
 */
export async function notifyAccounts(sql: Sql, notice: AccountsNotice): Promise<Notification[]> {
  const accounts = [...new Set(notice.accounts)];
  if (accounts.length === 0) return [];
  const ids = accounts.map(() => opaqueId('ntf'));
  const at = new Date((notice.now ?? Date.now)());
  const rows = await sql`
    insert into holdfast_notifications (id, account_id, type, endpoint_id, message, disable_at, created_at)
    select n.id, n.account_id, ${notice.type}, null, ${notice.message}, null, ${at}
    from unnest(${pgArray(ids)}::text[], ${pgArray(accounts)}::text[]) as n(id, account_id)
    returning *`;
  const notifications = rows.map(toNotification);
  if (notice.notifier) {
    for (const [i, notification] of notifications.entries()) {
      const account = rows[i]?.account_id;
      if (typeof account === 'string') await notice.notifier.notify(account, notification);
    }
  }
  return notifications;
}
