// @ts-check
/**
 * The notifications banner: a warning that an endpoint is about to be disabled shows on every page.
 *
 * @typedef {import('./values.js').Json} Json
 */

import { api, asPage, PAGE_SIZE } from './api.js';
import { announce, byId, h } from './dom.js';
import { obj, refId, str, time } from './values.js';

const NOTIFICATION_REFRESH_MS = 30_000;

let notificationsCheckedAt = 0;
/** @type {Set<string>} */
const dismissedNotifications = new Set();

/**
 * A notification warns about disabling when its type or text says so (the contract names "an
 * endpoint about to be disabled" as the example of what an account is told).
 * @param {Json} n
 */
export function isDisableWarning(n) {
  const words = [str(n.type), str(n.code), str(n.kind), str(n.title), str(n.message)].join(' ').toLowerCase();
  return /disabl/.test(words);
}

/** @param {Json} n */
export function notificationText(n) {
  return str(n.message) ?? str(n.detail) ?? str(n.title) ?? str(n.type) ?? 'Notification';
}

/** @param {Json} n */
export function notificationEndpoint(n) {
  const data = obj(n.data);
  return (
    refId(n.endpoint) ??
    refId(n.webhookEndpoint) ??
    refId(data?.endpoint) ??
    refId(data?.webhookEndpoint) ??
    refId(obj(data?.object)?.id)
  );
}

/** @param {Json} n */
function notificationDeadline(n) {
  const data = obj(n.data);
  return str(n.disableAt) ?? str(n.disablesAt) ?? str(data?.disableAt) ?? str(data?.disablesAt);
}

/** Forgets what was checked and dismissed, for the next account to sign in. */
export function resetBanners() {
  notificationsCheckedAt = 0;
  dismissedNotifications.clear();
  byId('banners').replaceChildren();
  byId('banners').hidden = true;
}

export async function refreshBanners(force = false) {
  if (!force && Date.now() - notificationsCheckedAt < NOTIFICATION_REFRESH_MS) return;
  notificationsCheckedAt = Date.now();
  const region = byId('banners');
  try {
    const { data } = await api('/notifications', { query: { limit: String(PAGE_SIZE) } });
    const warnings = asPage(data).data.filter(
      (n) => isDisableWarning(n) && !dismissedNotifications.has(str(n.id) ?? ''),
    );
    region.replaceChildren(
      ...warnings.map((n) => {
        const id = str(n.id) ?? '';
        const endpoint = notificationEndpoint(n);
        const deadline = notificationDeadline(n);
        const banner = h(
          'div',
          { class: 'banner warning' },
          h('p', {}, h('strong', {}, 'Endpoint at risk: '), notificationText(n)),
          endpoint !== undefined
            ? h(
                'p',
                {},
                'Endpoint ',
                h('code', {}, endpoint),
                deadline !== undefined ? ' · disables at ' : '',
                deadline !== undefined ? time(deadline) : null,
              )
            : null,
          h(
            'div',
            { class: 'actions' },
            endpoint !== undefined
              ? h(
                  'a',
                  {
                    href: `#/deliveries?endpoint=${encodeURIComponent(endpoint)}`,
                    class: 'button secondary small',
                  },
                  'See its deliveries',
                )
              : null,
            h('a', { href: '#/notifications', class: 'button secondary small' }, 'All notifications'),
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary small',
                onclick: () => {
                  dismissedNotifications.add(id);
                  banner.remove();
                  region.hidden = region.childElementCount === 0;
                  announce('Alert dismissed for this session.');
                },
              },
              'Dismiss',
            ),
          ),
        );
        return banner;
      }),
    );
    region.hidden = warnings.length === 0;
  } catch {
    // The banner is a convenience; the notifications view shows the error itself.
  }
}
