// @ts-check
/** The events view: every event of the account, newest first, with its payload on demand. */

import { pageHeading, refreshButton } from '../components.js';
import { byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { code, dash, jsonBlock, str, time } from '../values.js';
import { eventLink } from './event.js';

export function eventsView() {
  const main = byId('main');
  const list = pagedTable({
    path: '/events',
    caption: 'Events',
    empty: 'No events yet. Creating or changing a resource emits one.',
    columns: [
      {
        label: 'Event',
        cell: (e) => {
          const id = str(e.id);
          return id === undefined ? dash() : eventLink(id);
        },
      },
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
            jsonBlock(e.data ?? null, `Data of ${str(e.id) ?? 'the event'}`),
          ),
      },
    ],
  });
  main.replaceChildren(pageHeading('Events', [refreshButton(() => void list.reload())]), list.element);
  main.querySelector('h1')?.focus();
}
