// @ts-check
/** The notifications view; warnings about an endpoint being disabled stand out. */

import { isDisableWarning, notificationEndpoint, notificationText, refreshBanners } from '../banners.js';
import { pageHeading, refreshButton } from '../components.js';
import { byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { code, dash, str, time } from '../values.js';

export function notificationsView() {
  const main = byId('main');
  const list = pagedTable({
    path: '/notifications',
    caption: 'Notifications',
    empty: 'No notifications. Warnings such as an endpoint about to be disabled appear here.',
    columns: [
      { label: 'Time', cell: (n) => time(n.createdAt) },
      {
        label: 'Type',
        cell: (n) =>
          isDisableWarning(n)
            ? h('span', { class: 'badge badge-failed' }, str(n.type) ?? 'warning')
            : code(n.type),
      },
      { label: 'Message', className: 'wrap', cell: (n) => notificationText(n) },
      {
        label: 'Endpoint',
        cell: (n) => {
          const ep = notificationEndpoint(n);
          return ep === undefined
            ? dash()
            : h('a', { href: `#/deliveries?endpoint=${encodeURIComponent(ep)}`, class: 'mono' }, ep);
        },
      },
    ],
  });
  main.replaceChildren(
    pageHeading('Notifications', [
      refreshButton(() => {
        void list.reload();
        void refreshBanners(true);
      }),
    ]),
    list.element,
  );
  main.querySelector('h1')?.focus();
}
