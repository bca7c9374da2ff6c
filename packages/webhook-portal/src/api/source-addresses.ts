import { keyAccounts, tenantOf } from '@holdfast/api-keys';
import type { Db, Transaction } from '@holdfast/db';
import {
  type EgressOptions,
  egressSourceRanges,
  endpointTenants,
  notifyAccounts,
} from '@holdfast/webhook-delivery';
import { z } from '@hono/zod-openapi';

// The addresses webhooks leave from, published for receivers' allowlists: one row
// (`holdfast_webhook_source_addresses`, this package's migrations), stable while the
// configuration is, and every account told when it changes.

/** Where the list is kept: statements, and transactions that lock its row. */
export interface SourceAddressStore {
  readonly db: Db;
  readonly transaction: Transaction<unknown>;
}

/** The `WebhookSourceAddresses` component: the body of `GET /webhook-source-addresses`. */
export const SourceAddressesSchema: z.ZodObject<
  { addresses: z.ZodArray<z.ZodString>; configured: z.ZodBoolean; updatedAt: z.ZodString },
  z.core.$strip
> = z
  .object({
    addresses: z.array(z.string()).meta({
      description:
        'CIDR ranges webhooks are sent from: addresses this server binds as /32 (IPv4) or /128 (IPv6), or the ranges of its egress proxy as configured. Empty when nothing is configured.',
      example: ['203.0.113.7/32', '2001:db8::7/128'],
    }),
    configured: z.boolean().meta({
      description:
        'Whether the operator configured where webhooks leave from; `false` means the list is empty and an allowlist cannot be built from it.',
    }),
    updatedAt: z.string().meta({
      description:
        'When this list was first published (RFC 3339, UTC, milliseconds). It moves only when the list changes, and every account is notified then (`webhook_source_addresses_changed`).',
      example: '2026-11-27T10:00:00.000Z',
    }),
  })
  .meta({ id: 'WebhookSourceAddresses' });

/** The document of `GET /webhook-source-addresses`. */
export interface SourceAddresses {
  /** CIDR ranges webhooks are sent from: bound addresses as /32 or /128, a proxy's ranges as given. */
  readonly addresses: readonly string[];
  /** Whether this server was told where it sends from; `false`: the list is empty, allowlisting cannot work. */
  readonly configured: boolean;
  /** When this list was first published (RFC 3339, ms, UTC): it moves only when the list changes. */
  readonly updatedAt: string;
}

/** The notification type every account gets when the list changes. */
export const SOURCE_ADDRESSES_CHANGED = 'webhook_source_addresses_changed';

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((item, i) => item === b[i]);

// A text[] literal: what postgres.js and PGlite both take without fetching array types first.
const textArray = (list: readonly string[]): string =>
  `{${list.map((item) => `"${item.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;

/**
 * A list as a sentence names it: the ranges, or `none published`.
 *
 * @example
 * ```ts
 * describeSourceAddresses([]); // 'none published'
 * ```
 */
export const describeSourceAddresses = (list: readonly string[]): string =>
  list.length === 0 ? 'none published' : list.join(', ');

const INSERT = `insert into holdfast_webhook_source_addresses (id, addresses, updated_at)
  values (true, $1::text[], $2::timestamptz)
  on conflict (id) do nothing`;
const SELECT = 'select addresses, updated_at from holdfast_webhook_source_addresses where id';
const UPDATE = `update holdfast_webhook_source_addresses
  set addresses = $1::text[], updated_at = $2::timestamptz
  where id`;

interface Row {
  addresses: string[];
  updated_at: Date;
}

/** Every tenant of the server: both modes of each account with a key, and each tenant with endpoints. */
async function everyTenant(db: Db): Promise<string[]> {
  const tenants = new Set<string>();
  for (const account of await keyAccounts(db)) {
    tenants.add(tenantOf(account, 'test'));
    tenants.add(tenantOf(account, 'live'));
  }
  for (const tenant of await endpointTenants(db)) tenants.add(tenant);
  return [...tenants].sort();
}

/**
 * Publishes the source addresses of `config.egress` (`egressSourceRanges` of
 * `@holdfast/webhook-delivery`; none without egress): the stored list and its date stay while the
 * list is the same; a different list replaces it, moves `updatedAt` and notifies every account
 * with the old and the new lists (once, however many processes start at the same time: the row
 * is locked). The first publication on a database notifies nobody: there was no list to change.
 *
 * @example
 * ```ts
 * const published = await publishSourceAddresses({ db, transaction }, { egress }, Date.now);
 * ```
 */
export async function publishSourceAddresses(
  database: SourceAddressStore,
  config: { readonly egress?: EgressOptions | undefined },
  now: () => number,
): Promise<SourceAddresses & { changedFrom: readonly string[] | undefined }> {
  const addresses = egressSourceRanges(config.egress);
  const configured = config.egress !== undefined;
  return database.transaction(async (_tx, db) => {
    await db.query(INSERT, [textArray(addresses), new Date(now())]);
    const [stored] = await db.query<Row>(`${SELECT} for update`);
    if (!stored) throw new Error('the source address row is missing after its insert');
    if (sameList(stored.addresses, addresses)) {
      return { addresses, configured, updatedAt: stored.updated_at.toISOString(), changedFrom: undefined };
    }
    const at = new Date(now());
    await db.query(UPDATE, [textArray(addresses), at]);
    await notifyAccounts(
      db,
      {
        accounts: await everyTenant(db),
        type: SOURCE_ADDRESSES_CHANGED,
        message: `The addresses webhooks are sent from changed: they were ${describeSourceAddresses(stored.addresses)}; they are now ${describeSourceAddresses(addresses)}. Update any allowlist of your webhook receivers (GET /webhook-source-addresses).`,
      },
      { now: () => at.getTime() },
    );
    return { addresses, configured, updatedAt: at.toISOString(), changedFrom: stored.addresses };
  });
}

/**
 * The published list as stored (what `/webhook-source-addresses` answers). Absent a row (nothing
 * published it yet), the list of `config.egress` is published first.
 *
 * @example
 * ```ts
 * const { addresses, configured, updatedAt } = await readSourceAddresses({ db, transaction }, { egress }, Date.now);
 * ```
 */
export async function readSourceAddresses(
  database: SourceAddressStore,
  config: { readonly egress?: EgressOptions | undefined },
  now: () => number,
): Promise<SourceAddresses> {
  const [stored] = await database.db.query<Row>(SELECT);
  if (!stored) {
    const { addresses, configured, updatedAt } = await publishSourceAddresses(database, config, now);
    return { addresses, configured, updatedAt };
  }
  return {
    addresses: stored.addresses,
    configured: stored.addresses.length > 0,
    updatedAt: stored.updated_at.toISOString(),
  };
}
