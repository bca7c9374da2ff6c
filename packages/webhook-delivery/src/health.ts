import type postgres from 'postgres';
import type { Outcome } from './classify';
import { opaqueId } from './id';
import { type Notification, toNotification } from './rows';

/** Told about every notification the sender writes for an account, e.g. to send an email. */
export interface Notifier {
  notify(account: string, notification: Notification): void | Promise<void>;
}

export const DAY_MS = 86_400_000;

export interface HealthContext {
  sql: postgres.Sql;
  now: () => number;
  /** Consecutive failing time before an endpoint is disabled. */
  disableAfterMs: number;
  notifier?: Notifier | undefined;
}

async function notify(
  context: HealthContext,
  account: string,
  endpointId: string,
  type: string,
  message: string,
  disableAt: Date | null,
): Promise<void> {
  const [row] = await context.sql`
    insert into holdfast_notifications (id, account_id, type, endpoint_id, message, disable_at, created_at)
    values (${opaqueId('ntf')}, ${account}, ${type}, ${endpointId}, ${message}, ${disableAt}, ${new Date(context.now())})
    returning *`;
  if (row && context.notifier) await context.notifier.notify(account, toNotification(row));
}

/**
 * The failure side of an endpoint's health: 410 disables it at once; otherwise
 * the failure streak starts, the account is warned a day before the disabling, then it is
 * disabled, each with a notification. (A success clears the streak in the batch's outcome
 * statement.)
 */
export async function recordFailure(
  context: HealthContext,
  {
    account,
    endpointId,
    url,
    outcome,
  }: { account: string; endpointId: string; url: string; outcome: Outcome },
): Promise<void> {
  const { sql } = context;
  const at = context.now();
  if (outcome === 'succeeded') return;
  if (outcome === 'gone') {
    const [updated] = await sql`
      update holdfast_webhook_endpoints set status = 'disabled', disabled_reason = 'gone', updated_at = ${new Date(at)}
      where id = ${endpointId} and status = 'active' returning id`;
    if (updated) {
      await notify(
        context,
        account,
        endpointId,
        'webhook_endpoint.disabled',
        `Webhook endpoint ${endpointId} (${url}) answered 410 Gone and has been disabled. Re-enable it to resume deliveries.`,
        null,
      );
    }
    return;
  }
  const [endpoint] = await sql<{ failing_since: Date; disable_warned_at: Date | null }[]>`
    update holdfast_webhook_endpoints set failing_since = coalesce(failing_since, ${new Date(at)})
    where id = ${endpointId} and status = 'active'
    returning failing_since, disable_warned_at`;
  if (!endpoint) return;
  const since = endpoint.failing_since.getTime();
  const disableAt = new Date(Math.max(since + context.disableAfterMs, at + DAY_MS));
  if (!endpoint.disable_warned_at && at >= since + context.disableAfterMs - DAY_MS) {
    const [warned] = await sql`
      update holdfast_webhook_endpoints set disable_warned_at = ${new Date(at)}
      where id = ${endpointId} and disable_warned_at is null returning id`;
    if (warned) {
      await notify(
        context,
        account,
        endpointId,
        'webhook_endpoint.disabling',
        `Every delivery to webhook endpoint ${endpointId} (${url}) has failed since ${new Date(since).toISOString()}. It will be disabled at ${disableAt.toISOString()} unless a delivery succeeds.`,
        disableAt,
      );
    }
    return;
  }
  if (
    endpoint.disable_warned_at &&
    at >= since + context.disableAfterMs &&
    at >= endpoint.disable_warned_at.getTime() + DAY_MS
  ) {
    const [disabled] = await sql`
      update holdfast_webhook_endpoints set status = 'disabled', disabled_reason = 'failing', updated_at = ${new Date(at)}
      where id = ${endpointId} and status = 'active' returning id`;
    if (disabled) {
      await notify(
        context,
        account,
        endpointId,
        'webhook_endpoint.disabled',
        `Webhook endpoint ${endpointId} (${url}) was disabled after failing every delivery since ${new Date(since).toISOString()}.`,
        null,
      );
    }
  }
}
