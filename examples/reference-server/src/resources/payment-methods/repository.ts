import { isLive } from '@holdfast/api-keys';
import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/request-guards';
import type { z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import { isoTime } from '../../iso-time';
import type { CreatePaymentMethodSchema, PaymentMethodSchema } from './schema';

const SELECT_METHOD = `select * from holdfast_payment_methods
  where id = $1::text and account_id = $2::text and deleted_at is null`;
const INSERT_METHOD = `insert into holdfast_payment_methods (id, account_id, type, card, created_at, updated_at)
  values ($1::text, $2::text, 'card', $3::text::jsonb, $4::timestamptz, $4::timestamptz)
  returning *`;
const REMOVE_METHOD = `update holdfast_payment_methods set deleted_at = $3::timestamptz, updated_at = $3::timestamptz
  where id = $1::text and account_id = $2::text and deleted_at is null
  returning id`;

/** The API representation of a `holdfast_payment_methods` row. */
export function toPaymentMethod(row: postgres.Row): z.infer<typeof PaymentMethodSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    type: 'card',
    card: row.card,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** The caller's live (not removed) payment method `id`, or `undefined`. */
export async function findPaymentMethod(
  db: Db,
  account: string,
  id: string,
): Promise<postgres.Row | undefined> {
  const [row] = await db.query<postgres.Row>(SELECT_METHOD, [id, account]);
  return row;
}

/** Stores a card payment method for `account`. */
export async function insertPaymentMethod(
  db: Db,
  account: string,
  body: z.infer<typeof CreatePaymentMethodSchema>,
  now: number,
): Promise<z.infer<typeof PaymentMethodSchema>> {
  const at = new Date(now);
  const [row] = await db.query<postgres.Row>(INSERT_METHOD, [
    opaqueId('pm'),
    account,
    JSON.stringify(body.card),
    at,
  ]);
  if (!row) throw new Error('insert returned no row');
  return toPaymentMethod(row);
}

/** Removes the payment method `id` of `account` (a soft delete); whether there was one. */
export async function removePaymentMethod(
  db: Db,
  account: string,
  id: string,
  now: number,
): Promise<boolean> {
  const at = new Date(now);
  const removed = await db.query(REMOVE_METHOD, [id, account, at]);
  return removed.length > 0;
}
