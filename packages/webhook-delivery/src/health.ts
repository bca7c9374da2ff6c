import { opaqueId } from '@holdfast/ids';
import type { Outcome } from './classify';
import { type Notification, toNotification } from './rows';
import type { QueueDb } from './sql/worker';

/** Told about every notification the sender writes for an account, e.g. to send an email. */
export interface Notifier {
  notify(account: string, notification: Notification): void | Promise<void>;
}

export const DAY_MS = 86_400_000;

export interface HealthContext {
  queue: QueueDb;
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
  const { db, sql } = context.queue;
  const [row] = await db.query(sql.notification, [
    opaqueId('ntf'),
    account,
    type,
    endpointId,
    message,
    disableAt?.toISOString() ?? null,
    new Date(context.now()).toISOString(),
  ]);
  if (row && context.notifier) await context.notifier.notify(account, toNotification(row));
}

/** Disables an active endpoint with its notification, in one statement; the notifier is told after. */
async function disable(
  context: HealthContext,
  account: string,
  endpointId: string,
  atIso: string,
  reason: 'gone' | 'failing',
  message: string,
): Promise<void> {
  const { db, sql } = context.queue;
  const [row] = await db.query(sql.disable, [endpointId, atIso, reason, opaqueId('ntf'), account, message]);
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
  const { db, sql } = context.queue;
  const at = context.now();
  const atIso = new Date(at).toISOString();
  if (outcome === 'succeeded') return;
  if (outcome === 'gone') {
    await disable(
      context,
      account,
      endpointId,
      atIso,
      'gone',
      `Webhook endpoint ${endpointId} (${url}) answered 410 Gone and has been disabled. Re-enable it to resume deliveries.`,
    );
    return;
  }
  const [endpoint] = await db.query<{ failing_since_ms: number; disable_warned_ms: number | null }>(
    sql.failing,
    [endpointId, atIso],
  );
  if (!endpoint) return;
  const since = endpoint.failing_since_ms;
  const disableAt = new Date(Math.max(since + context.disableAfterMs, at + DAY_MS));
  if (endpoint.disable_warned_ms === null && at >= since + context.disableAfterMs - DAY_MS) {
    const [warned] = await db.query(sql.warned, [endpointId, atIso]);
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
    endpoint.disable_warned_ms !== null &&
    at >= since + context.disableAfterMs &&
    at >= endpoint.disable_warned_ms + DAY_MS
  ) {
    await disable(
      context,
      account,
      endpointId,
      atIso,
      'failing',
      `Webhook endpoint ${endpointId} (${url}) was disabled after failing every delivery since ${new Date(since).toISOString()}.`,
    );
  }
}
