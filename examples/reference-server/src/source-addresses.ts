import { keyAccounts, tenantOf } from '@holdfast/api-keys';
import type { Db } from '@holdfast/db';
import { checkEgress, egressSourceRanges, endpointTenants, notifyAccounts } from '@holdfast/webhook-delivery';
import { type Config, ConfigError } from './config';
import type { Database } from './context';
import type { Logger } from './observability/logger';

/** The document of `GET /webhook-source-addresses`. */
export interface SourceAddresses {
  /** CIDR ranges webhooks are sent from: bound addresses as /32 or /128, a proxy's ranges as given. */
  readonly addresses: readonly string[];
  /** Whether this server was told where it sends from; `false`: the list is empty, allowlisting cannot work. */
  readonly configured: boolean;
  /** When this list was first published (RFC 3339, ms, UTC): it moves only when the list changes. */
  readonly updatedAt: string;
}

export const SOURCE_ADDRESSES_CHANGED = 'webhook_source_addresses_changed';

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, i) => item === b[i]);

// A text[] literal: what postgres.js and PGlite both take without fetching array types first.
const textArray = (list: readonly string[]) =>
  `{${list.map((item) => `"${item.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;

const described = (list: readonly string[]) => (list.length === 0 ? 'none published' : list.join(', '));

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
 * Publishes this configuration's source addresses: the stored list and its date stay while the
 * list is the same; a different list replaces it, moves `updatedAt` and notifies every account
 * with the old and the new lists (once, however many processes start at the same time: the row
 * is locked). The first publication on a database notifies nobody: there was no list to change.
 *
 * @example
 * ```ts
 * const published = await publishSourceAddresses(database, config, Date.now);
 * ```
 */
export async function publishSourceAddresses(
  database: Database,
  config: Pick<Config, 'egress'>,
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
        message: `The addresses webhooks are sent from changed: they were ${described(stored.addresses)}; they are now ${described(addresses)}. Update any allowlist of your webhook receivers (GET /webhook-source-addresses).`,
      },
      { now: () => at.getTime() },
    );
    return { addresses, configured, updatedAt: at.toISOString(), changedFrom: stored.addresses };
  });
}

/**
 * The published list as stored (what `/webhook-source-addresses` answers). Absent a row (an app
 * built without `startServer`), this configuration's list is published first.
 */
export async function readSourceAddresses(
  database: Database,
  config: Pick<Config, 'egress'>,
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

/**
 * At start: a process that runs the delivery workers refuses addresses it cannot bind (naming
 * the address), then the list is published and said in the log; in production a server that
 * publishes nothing is warned about, since no receiver can allowlist it.
 *
 * @example
 * ```ts
 * await announceSourceAddresses(deps, config, Date.now, log);
 * ```
 */
export async function announceSourceAddresses(
  database: Database,
  config: Pick<Config, 'egress' | 'role' | 'production'>,
  now: () => number,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<SourceAddresses> {
  if (config.egress?.addresses !== undefined && config.role !== 'api') {
    try {
      await checkEgress(config.egress);
    } catch (error) {
      throw new ConfigError(
        `HOLDFAST_EGRESS_ADDRESSES: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const published = await publishSourceAddresses(database, config, now);
  const { addresses, updatedAt, changedFrom } = published;
  if (!published.configured) {
    const message =
      'webhook source addresses: none configured (HOLDFAST_EGRESS_ADDRESSES or HOLDFAST_EGRESS_PROXY): deliveries leave from whatever address the system picks, and /webhook-source-addresses publishes an empty list';
    if (config.production) log.warn(message);
    else log.info(message);
  } else {
    log.info({ addresses, updatedAt }, `webhook source addresses published: ${addresses.join(', ')}`);
  }
  if (changedFrom !== undefined) {
    log.warn(
      { addresses, previous: changedFrom },
      `webhook source addresses changed from ${described(changedFrom)} to ${described(addresses)}: every account was notified`,
    );
  }
  return { addresses, configured: published.configured, updatedAt };
}
