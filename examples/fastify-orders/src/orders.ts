import { problem } from '@holdfast/problem-details';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';

/**
 * An order's statuses, in the order `sort=status` ranks them.
 *
 * @example
 * ```ts
 * ORDER_STATUSES.includes('paid'); // true
 * ```
 */
export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** An order as the API shows it. */
export interface Order {
  readonly id: string;
  readonly customer: string;
  readonly status: OrderStatus;
  readonly total: number;
  readonly createdAt: string;
}

/** What `POST /orders` takes. */
export interface OrderInput {
  readonly customer: string;
  readonly total: number;
  readonly status: OrderStatus;
}

/**
 * The sorts `GET /orders` serves: `sort=-createdAt` (the default), `total`, `status,-total`...
 * Anything else is 400 `invalid_sort`; the id breaks ties, so every sort is a total order.
 *
 * @example
 * ```ts
 * paginate(fromPg(pool), { from: 'orders', allowlist: orderSort, sort: 'status,-total', binding, keyring });
 * ```
 */
export const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
    status: { column: 'status', type: 'enum', rank: [...ORDER_STATUSES] },
    customer: { column: 'customer', type: 'text' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

const FIELDS = new Set(['customer', 'total', 'status']);

function isStatus(value: unknown): value is OrderStatus {
  return typeof value === 'string' && (ORDER_STATUSES as readonly string[]).includes(value);
}

/**
 * The order input in `body`, checked field by field; otherwise throws 400 `validation_failed`
 * naming each bad field (an unknown one included), before anything is claimed or written.
 *
 * @example
 * ```ts
 * parseOrderInput({ customer: 'cus_1', total: 4200 }); // { customer: 'cus_1', total: 4200, status: 'pending' }
 * ```
 */
export function parseOrderInput(body: unknown): OrderInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw problem('validation_failed', { detail: 'The body must be a JSON object.' });
  }
  const input = body as Record<string, unknown>;
  const errors: { field: string; code: string; detail: string }[] = [];
  for (const field of Object.keys(input)) {
    if (!FIELDS.has(field))
      errors.push({ field: field.slice(0, 100), code: 'unknown', detail: 'Not a field of an order.' });
  }
  const { customer, total, status = 'pending' } = input;
  if (typeof customer !== 'string' || customer.trim() === '' || customer.length > 100) {
    errors.push({
      field: 'customer',
      code: 'invalid',
      detail: 'A non-blank string of at most 100 characters.',
    });
  }
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) {
    errors.push({ field: 'total', code: 'invalid', detail: 'A non-negative integer, in minor units.' });
  }
  if (!isStatus(status)) {
    errors.push({ field: 'status', code: 'invalid', detail: `One of ${ORDER_STATUSES.join(', ')}.` });
  }
  if (errors.length > 0 || typeof customer !== 'string' || typeof total !== 'number' || !isStatus(status)) {
    throw problem('validation_failed', { detail: 'The order is not valid.', errors });
  }
  return { customer, total, status };
}
