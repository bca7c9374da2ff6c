import type { Db } from '@holdfast/db';
import { endpointScope, queuedEventTypes } from '@holdfast/webhook-delivery';
import type { PortalCaller } from '../caller';
import type { Management } from './options';

/** What {@link authorizeEndpointAction} checks. */
export interface EndpointAction {
  /** The endpoint's id, of the caller's account. */
  readonly id: string;
  /**
   * The event types the endpoint will carry after the change, checked beside the ones it carries
   * now (both are read: changing what an endpoint carries changes where that data goes).
   */
  readonly eventTypes?: readonly string[] | undefined;
  /**
   * The action can send what is queued for the endpoint somewhere new (a new URL, enabling):
   * the event types of its deliveries still `pending` or `failed` count as carried too, so
   * narrowing `eventTypes` first cannot redirect deliveries already queued.
   */
  readonly queued?: boolean;
  /** `update` for an action that changes the endpoint row, `share` for one that only reads it. */
  readonly lock: 'update' | 'share';
  /** The action, as the refusal's detail names it: "Rotating the secret". */
  readonly action: string;
}

/**
 * Scopes follow the data, for any action on an existing endpoint (every change of any field,
 * disabling and deleting included, a secret rotation, a replay or test): locks its row for the
 * rest of the transaction `tx` (so its event types cannot change between this check and the
 * action), then 403 `insufficient_scope` unless `caller` may read every event type it carries
 * now and, for a change of `eventTypes`, every type it will carry. Resolves `false` when the
 * account has no such endpoint (the caller answers 404).
 */
export async function authorizeEndpointAction(
  tx: Db,
  m: Management,
  caller: PortalCaller,
  action: EndpointAction,
): Promise<boolean> {
  const scope = await endpointScope(tx, { account: caller.account, id: action.id }, action.lock);
  if (!scope) return false;
  m.rules.requireReadable(caller, m.rules.carried(scope.eventTypes), action.action);
  if (action.eventTypes !== undefined)
    m.rules.requireReadable(caller, m.rules.carried(action.eventTypes), action.action);
  if (action.queued) m.rules.requireReadable(caller, await queuedEventTypes(tx, action.id), action.action);
  return true;
}
