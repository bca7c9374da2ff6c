import { hasScope, insufficientScope } from '@holdfast/api-keys';
import type { PortalCaller } from '../caller';

/**
 * The event types a service emits, each with the scopes that may read it: holding any one of
 * them reads the type (`*` holds every scope, `x:write` implies `x:read`).
 */
export type EventTypeScopes = Readonly<Record<string, readonly string[]>>;

/** Who is asking, as far as reading event data goes. */
type Scoped = Pick<PortalCaller, 'scopes'>;

/** The rules of what event data a caller reaches, for one map of event types to scopes. */
export interface EventTypeRules {
  /** Every event type, in the map's order. */
  readonly types: readonly string[];
  /**
   * The event types `caller` may read. Deliveries, attempts, endpoint stats, replay and recovery
   * filter by it in SQL, so pages, cursors and totals count only what is visible.
   */
  readable(caller: Scoped): string[];
  /** Whether `caller` may see an event (or a delivery of one) of `type`. */
  visible(caller: Scoped, type: string): boolean;
  /** What an endpoint subscribed to `eventTypes` carries: absent, empty or `*` is every type. */
  carried(eventTypes: readonly string[] | null | undefined): string[];
  /**
   * 403 (`insufficient_scope`) unless `caller` may read every type in `carried`: pointing an
   * endpoint's data somewhere, or sending it again, is reading that data.
   */
  requireReadable(caller: Scoped, carried: readonly string[], action: string): void;
  /** `type` when it is one of {@link types}; anything else is a broken invariant (500). */
  known(type: string): string;
}

/**
 * The scope rules of event data for `eventTypes`: scopes follow the data.
 *
 * @example
 * ```ts
 * const rules = eventTypeRules({ 'order.created': ['orders:read'] });
 * rules.readable({ scopes: new Set(['orders:read']) }); // ['order.created']
 * ```
 */
export function eventTypeRules(
  eventTypes: EventTypeScopes,
  options: { readonly realm?: string } = {},
): EventTypeRules {
  const types = Object.keys(eventTypes);
  const scopesOf = (type: string): readonly string[] => eventTypes[type] ?? ['*'];
  const reads = (caller: Scoped, type: string) => scopesOf(type).some((scope) => hasScope(caller, scope));
  const readable = (caller: Scoped) => types.filter((type) => reads(caller, type));
  return {
    types,
    readable,
    visible: (caller, type) => Object.hasOwn(eventTypes, type) && reads(caller, type),
    carried: (subscribed) => {
      const list = subscribed ?? [];
      if (list.length === 0 || list.includes('*')) return [...types];
      return [...new Set(list)];
    },
    requireReadable: (caller, carried, action) => {
      for (const type of carried) {
        if (reads(caller, type)) continue;
        const scope = scopesOf(type)[0] ?? '*';
        throw insufficientScope(scope, {
          detail: `${action} needs the "${scope}" scope: the endpoint carries "${type}" events, which this API key may not read.`,
          realm: options.realm ?? 'api',
        });
      }
    },
    known: (type) => {
      if (!Object.hasOwn(eventTypes, type))
        throw new Error(`stored event type ${JSON.stringify(type)} is not one of the configured event types`);
      return type;
    },
  };
}
