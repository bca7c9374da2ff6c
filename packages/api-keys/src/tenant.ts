import type { KeyMode } from './key';

// Test and live data are two disjoint worlds, as Stripe's livemode: the tenant every row
// belongs to is the account in test mode and `<account>:live` in live mode, so every query
// scoped by the tenant sees one mode's rows only, and anything keyed by the tenant
// (idempotency keys, webhook endpoints, cursor bindings) keeps them apart with no change of its
// own. A test key's tenant is its bare account.
const LIVE_SUFFIX = ':live';

/**
 * The tenant of `account` in `mode`: what every tenant-scoped column holds.
 *
 * @example
 * ```ts
 * tenantOf('acct_1', 'live'); // 'acct_1:live'
 * tenantOf('acct_1', 'test'); // 'acct_1'
 * ```
 */
export function tenantOf(account: string, mode: KeyMode): string {
  return mode === 'live' ? `${account}${LIVE_SUFFIX}` : account;
}

/**
 * Whether a tenant (from {@link tenantOf}) is live mode.
 *
 * @example
 * ```ts
 * isLive('acct_1:live'); // true
 * ```
 */
export function isLive(tenant: string): boolean {
  return tenant.endsWith(LIVE_SUFFIX);
}
