import type postgres from 'postgres';
import type { Principal } from '../context';
import { carriedEventTypes, requireReadable } from '../event-types';

/** What {@link authorizeEndpointAction} checks. */
export interface EndpointAction {
  /** The endpoint's id, of the principal's account. */
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
 * CONTRACT sections 11 and 12, "Scopes follow the data" and "Scopes on every endpoint field", for
 * any action on an existing endpoint (every change of any field, disabling and deleting
 * included, a secret rotation, a replay or test): locks its row for the rest of the transaction
 * `tx` (so its event types cannot change between this check and the action), then 403
 * `insufficient_scope` unless `principal` may read every event type it carries now and, for a
 * change of `eventTypes`, every type it will carry. Resolves `false` when the account has no such
 * endpoint (the caller answers 404).
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   if (!(await authorizeEndpointAction(tx, principal, { id, lock: 'update', action: 'Rotating the secret' }))) throw missing(id);
 *   return rotateSecret(tx, { account, id });
 * });
 * ```
 */
export async function authorizeEndpointAction(
  tx: postgres.TransactionSql,
  principal: Principal,
  action: EndpointAction,
): Promise<boolean> {
  const lock = action.lock === 'update' ? tx`for update` : tx`for share`;
  const [row] = await tx<{ event_types: string[] }[]>`
    select event_types from holdfast_webhook_endpoints
    where id = ${action.id} and account_id = ${principal.account} and deleted_at is null
    ${lock}`;
  if (!row) return false;
  requireReadable(principal, carriedEventTypes(row.event_types), action.action);
  if (action.eventTypes !== undefined)
    requireReadable(principal, carriedEventTypes(action.eventTypes), action.action);
  if (action.queued) {
    const queued = await tx<{ event_type: string }[]>`
      select distinct event_type from holdfast_deliveries
      where endpoint_id = ${action.id} and status in ('pending', 'failed')`;
    requireReadable(
      principal,
      queued.map((delivery) => delivery.event_type),
      action.action,
    );
  }
  return true;
}
