import { checkEgress } from '@holdfast/webhook-delivery';
import {
  describeSourceAddresses,
  publishSourceAddresses,
  type SourceAddresses,
} from '@holdfast/webhook-portal';
import { type Config, ConfigError } from './config';
import type { Database } from './context';
import type { Logger } from './observability/logger';

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
      `webhook source addresses changed from ${describeSourceAddresses(changedFrom)} to ${describeSourceAddresses(addresses)}: every account was notified`,
    );
  }
  return { addresses, configured: published.configured, updatedAt };
}
