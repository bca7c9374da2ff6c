// @ts-check
/** The events view: every event of the account, newest first, with its payload on demand. */

import { pageHeading, refreshButton } from '../components.js';
import { byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { code, dash, str, time } from '../values.js';

export function eventsView() {
  const main = byId('main');
  const list = pagedTable({
    path: '/events',
    caption: 'Events',
    empty: 'No events yet. Creating or changing a resource emits one.',
    columns: [
      { label: 'Event', cell: (e) => code(e.id) },
      { label: 'Type', cell: (e) => code(e.type) },
      { label: 'Sequence', cell: (e) => str(e.sequence) ?? dash() },
      { label: 'Created', cell: (e) => time(e.createdAt) },
      {
        label: 'Payload',
        className: 'wrap',
        cell: (e) =>
          h(
            'details',
            {},
            h(
              'summary',
              {},
              `Show data`,
              h('span', { class: 'visually-hidden' }, ` of ${str(e.id) ?? 'event'}`),
            ),
            h('pre', { class: 'body-prefix' }, JSON.stringify(e.data ?? null, null, 2)),
          ),
      },
    ],
  });
  main.replaceChildren(pageHeading('Events', [refreshButton(() => void list.reload())]), list.element);
  main.querySelector('h1')?.focus();
}
