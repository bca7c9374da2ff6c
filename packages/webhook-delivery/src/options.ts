import type { DestinationOptions } from './ssrf';

/** What every function of the sender takes besides its database and input. */
export interface DeliveryOptions {
  /**
   * The schema the sender's tables are in, as given to `migrations`. @defaultValue the
   * connection's `search_path` (unqualified names)
   */
  readonly schema?: string | undefined;
  /** The clock (ms since the epoch). @defaultValue `Date.now` */
  readonly now?: (() => number) | undefined;
}

/** {@link DeliveryOptions} of the functions that write an endpoint, with the SSRF rules its URL is checked against. */
export interface EndpointOptions extends DeliveryOptions, DestinationOptions {
  /**
   * A new endpoint's ceiling of the adaptive in-flight limit: the workers'
   * `perEndpointConcurrency`. @defaultValue 4
   */
  readonly concurrencyMax?: number | undefined;
  /** Where a new endpoint's adaptive in-flight limit starts (never above `concurrencyMax`). @defaultValue 4 */
  readonly concurrencyInitial?: number | undefined;
}
