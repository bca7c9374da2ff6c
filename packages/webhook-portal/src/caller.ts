/**
 * Who is calling the management API, as the adopter's `authorize(request)` answers it (or as a
 * portal session carries it). Every query is scoped by `account`; test and live are disjoint.
 * An `@holdfast/api-keys` `Principal` is one.
 */
export interface PortalCaller {
  /** The tenant whose endpoints and deliveries the caller sees: one account in one mode. */
  readonly account: string;
  /** Whether the caller acts in live mode (`false`: test mode). */
  readonly livemode: boolean;
  /** The scopes held: reading an event type needs the scopes the adopter maps it to. */
  readonly scopes: ReadonlySet<string>;
  /** A read-only caller is refused every write (403). */
  readonly readOnly?: boolean | undefined;
}

/**
 * How the adopter identifies a caller: `undefined` answers 401 with the package's problem
 * document. It may throw a `Problem` (for example a 429 from a rate limit).
 */
export type Authorize = (request: Request) => Promise<PortalCaller | undefined> | PortalCaller | undefined;
