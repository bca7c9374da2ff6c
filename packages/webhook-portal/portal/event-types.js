// @ts-check
/**
 * The event types the server accepts, read once from the portal's own `event-types` (the list the
 * host configured), so the page never carries a copy that could drift from the server's.
 */

import { pageSetting } from './dom.js';

/** @type {string[]} Filled by {@link loadEventTypes} before the first view renders. */
export const KNOWN_EVENT_TYPES = [];

/** Reads the list; a failure leaves it empty (forms then offer "every type" only). */
export async function loadEventTypes() {
  try {
    const res = await fetch(`${pageSetting('holdfast-portal-base')}/event-types`, {
      credentials: 'omit',
      cache: 'no-cache',
      referrerPolicy: 'no-referrer',
    });
    const body = /** @type {unknown} */ (await res.json());
    const data = typeof body === 'object' && body !== null && 'data' in body ? body.data : undefined;
    if (!res.ok || !Array.isArray(data)) return;
    KNOWN_EVENT_TYPES.splice(0, KNOWN_EVENT_TYPES.length, ...data.filter((t) => typeof t === 'string'));
  } catch {
    // Offline or refused: the page still works with "every type".
  }
}
