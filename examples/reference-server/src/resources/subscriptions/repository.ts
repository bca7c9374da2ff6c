import { isLive } from '@holdfast/api-keys';
import type { Db } from '@holdfast/db';
import { problem } from '@holdfast/problem-details';
import { opaqueId } from '@holdfast/request-guards';
import type { z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { Database } from '../../context';
import { isoTime } from '../../iso-time';
import { emit } from '../../outbox';
import { findPaymentMethod } from '../payment-methods/repository';
import type { CreateSubscriptionSchema, SubscriptionSchema, UpdateSubscriptionSchema } from './schema';

// The subscriptions' SQL and state machine: created `active` (`past_due` for a declined test
// card), changed while not canceled, canceled once; every change emits its event in the same
// transaction.

type Subscription = z.infer<typeof SubscriptionSchema>;

/** The API representation of a `holdfast_subscriptions` row. */
export function toSubscription(row: postgres.Row): z.infer<typeof SubscriptionSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    status: row.status,
    paymentMethod: row.payment_method_id,
    plan: row.plan,
    quantity: row.quantity,
    metadata: row.metadata,
    canceledAt: row.canceled_at === null ? null : isoTime(row.canceled_at),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

const notFound = () => problem('not_found', { detail: 'No such subscription.' });

const SELECT_SUBSCRIPTION =
  'select * from holdfast_subscriptions where id = $1::text and account_id = $2::text';
const INSERT_SUBSCRIPTION = `insert into holdfast_subscriptions (id, account_id, status, payment_method_id, plan,
    quantity, metadata, created_at, updated_at)
  values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::int, $7::text::jsonb, $8::timestamptz, $8::timestamptz)
  returning *`;
const UPDATE_SUBSCRIPTION = `update holdfast_subscriptions
  set plan = $2::text, quantity = $3::int, metadata = $4::text::jsonb, updated_at = $5::timestamptz
  where id = $1::text returning *`;
const CANCEL_SUBSCRIPTION = `update holdfast_subscriptions
  set status = 'canceled', canceled_at = $2::timestamptz, updated_at = $2::timestamptz
  where id = $1::text returning *`;

async function lock(tx: Db, account: string, id: string): Promise<postgres.Row> {
  const [row] = await tx.query<postgres.Row>(`${SELECT_SUBSCRIPTION} for update`, [id, account]);
  if (!row) throw notFound();
  return row;
}

/** The subscription as an update left it, announced as `subscription.updated` in the same transaction. */
async function updated(
  tx: Db,
  account: string,
  row: postgres.Row | undefined,
  at: Date,
): Promise<z.infer<typeof SubscriptionSchema>> {
  if (!row) throw notFound();
  const result = toSubscription(row);
  await emit(tx, {
    account,
    type: 'subscription.updated',
    resourceId: result.id,
    object: result,
    now: at.getTime(),
  });
  return result;
}

/** Creates a subscription of `account` and emits subscription.created. */
export async function insertSubscription(
  database: Database,
  account: string,
  body: z.infer<typeof CreateSubscriptionSchema>,
  now: number,
): Promise<Subscription> {
  return database.transaction(async (_tx, tx) => {
    const method = await findPaymentMethod(tx, account, body.paymentMethod);
    if (!method) {
      const detail = 'No such payment method on this account.';
      throw problem('unprocessable', {
        detail,
        errors: [{ field: 'paymentMethod', code: 'unprocessable', pointer: '#/paymentMethod', detail }],
      });
    }
    const at = new Date(now);
    const [row] = await tx.query<postgres.Row>(INSERT_SUBSCRIPTION, [
      opaqueId('sub'),
      account,
      method.card?.last4 === '0002' ? 'past_due' : 'active',
      body.paymentMethod,
      body.plan,
      body.quantity ?? 1,
      JSON.stringify(body.metadata ?? {}),
      at,
    ]);
    if (!row) throw new Error('insert returned no row');
    const result = toSubscription(row);
    await emit(tx, {
      account,
      type: 'subscription.created',
      resourceId: result.id,
      object: result,
      now: at.getTime(),
    });
    return result;
  });
}

/** The subscription `id` of `account`; 404 `not_found` when there is none. */
export async function findSubscription(
  database: Database,
  account: string,
  id: string,
): Promise<Subscription> {
  const [row] = await database.db.query<postgres.Row>(SELECT_SUBSCRIPTION, [id, account]);
  if (!row) throw notFound();
  return toSubscription(row);
}

/** Changes a subscription that is not canceled (else 409) and emits subscription.updated. */
export async function updateSubscription(
  database: Database,
  account: string,
  id: string,
  body: z.infer<typeof UpdateSubscriptionSchema>,
  now: number,
): Promise<Subscription> {
  return database.transaction(async (_tx, tx) => {
    const current = await lock(tx, account, id);
    if (current.status === 'canceled') {
      throw problem('invalid_state_transition', { detail: 'A canceled subscription cannot be changed.' });
    }
    const at = new Date(now);
    const [row] = await tx.query<postgres.Row>(UPDATE_SUBSCRIPTION, [
      id,
      body.plan ?? current.plan,
      body.quantity ?? current.quantity,
      JSON.stringify(body.metadata ?? current.metadata),
      at,
    ]);
    return updated(tx, account, row, at);
  });
}

/** Cancels a subscription (a canceled one is answered as it is) and emits subscription.updated. */
export async function cancelSubscription(
  database: Database,
  account: string,
  id: string,
  now: number,
): Promise<Subscription> {
  return database.transaction(async (_tx, tx) => {
    const current = await lock(tx, account, id);
    if (current.status === 'canceled') return toSubscription(current);
    const at = new Date(now);
    const [row] = await tx.query<postgres.Row>(CANCEL_SUBSCRIPTION, [id, at]);
    return updated(tx, account, row, at);
  });
}
