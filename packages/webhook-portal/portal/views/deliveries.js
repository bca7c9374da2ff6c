// @ts-check
/**
 * The deliveries list and, with the status fixed to `dead`, the dead-letter view.
 *
 * @typedef {import('../app.js').Route} Route
 * @typedef {import('../paged-table.js').Column} Column
 * @typedef {ReturnType<typeof import('../paged-table.js').pagedTable>} PagedTable
 * @typedef {{ status: string, endpoint: string, eventType: string, deadLetters: boolean, title: string,
 *   base: string }} Filters
 */

import { api, asPage, readOnly } from '../api.js';
import { pageHeading, refreshButton } from '../components.js';
import { attemptCount, deliveryEventType, replayButton } from '../delivery-parts.js';
import { append, byId, h } from '../dom.js';
import { KNOWN_EVENT_TYPES } from '../event-types.js';
import { pagedTable } from '../paged-table.js';
import { breakableUrl, code, dash, refId, statusBadge, str, time } from '../values.js';

const DELIVERY_STATUSES = ['pending', 'failed', 'succeeded', 'dead'];

/**
 * Deliveries with filters; with `dead` fixed it is the dead-letter view (`GET /deliveries?status=dead`).
 * @param {Route} route
 * @param {{ deadLetters: boolean }} mode
 */
export function deliveriesView(route, mode) {
  const main = byId('main');
  /** @type {Filters} */
  const f = {
    status: mode.deadLetters ? 'dead' : (route.params.get('status') ?? ''),
    endpoint: route.params.get('endpoint') ?? '',
    eventType: route.params.get('eventType') ?? '',
    deadLetters: mode.deadLetters,
    title: mode.deadLetters ? 'Dead letters' : 'Deliveries',
    base: mode.deadLetters ? '#/dead-letters' : '#/deliveries',
  };
  const endpointSelect = h(
    'select',
    { id: 'f-endpoint', name: 'endpoint' },
    h('option', { value: '' }, 'Any endpoint'),
  );
  if (f.endpoint !== '')
    endpointSelect.append(h('option', { value: f.endpoint, selected: true }, f.endpoint));
  /** Endpoint URLs by id: the list shows where a delivery went, not an opaque id. */
  const urls = new Map();
  void fillEndpoints(main, urls, endpointSelect, f.endpoint);
  const replayed = h('div', { class: 'replayed' });
  /** @type {PagedTable} */
  const list = pagedTable({
    path: '/deliveries',
    query: {
      status: f.status || undefined,
      endpoint: f.endpoint || undefined,
      eventType: f.eventType || undefined,
    },
    caption: f.title,
    empty: f.deadLetters
      ? 'No dead letters. Deliveries that run out of retries, or are refused for good, appear here.'
      : 'No deliveries match.',
    columns: deliveryColumns(
      urls,
      f.deadLetters && !readOnly() ? (id) => onReplayed(list, replayed, id) : undefined,
    ),
  });
  main.replaceChildren();
  append(main, [
    pageHeading(f.title, [refreshButton(() => void list.reload())]),
    f.deadLetters
      ? h(
          'p',
          { class: 'lead' },
          'Deliveries that ran out of retries or were refused for good. Replay sends the same event again, with the same Webhook-Id.',
        )
      : null,
    filterForm(f, endpointSelect),
    replayed,
    list.element,
  ]);
  main.querySelector('h1')?.focus();
}

/**
 * Reads the account's endpoints: their URLs for the list, and the choices of the endpoint filter.
 * @param {HTMLElement} main @param {Map<unknown, string>} urls @param {HTMLSelectElement} endpointSelect
 * @param {string} endpoint the endpoint filtered on, if any
 */
async function fillEndpoints(main, urls, endpointSelect, endpoint) {
  try {
    const { data } = await api('/webhook-endpoints', { query: { limit: '100' } });
    for (const ep of asPage(data).data) {
      const url = str(ep.url);
      if (url !== undefined) urls.set(str(ep.id), url);
    }
    for (const cell of main.querySelectorAll('[data-endpoint-id]')) {
      const url = urls.get(cell.getAttribute('data-endpoint-id'));
      if (url !== undefined) {
        const shown = breakableUrl(url);
        cell.classList.add('mono', 'url');
        cell.replaceChildren(...shown.childNodes);
      }
    }
    for (const ep of asPage(data).data) {
      const id = str(ep.id);
      if (id === undefined || id === endpoint) continue;
      endpointSelect.append(h('option', { value: id }, `${str(ep.url) ?? id} (${id})`));
    }
    const current = endpointSelect.querySelector(`option[value="${CSS.escape(endpoint)}"]`);
    const ep = asPage(data).data.find((e) => str(e.id) === endpoint);
    if (current !== null && ep !== undefined)
      current.textContent = `${str(ep.url) ?? endpoint} (${endpoint})`;
  } catch {
    // The select still offers "Any endpoint" and the one in the URL.
  }
}

/**
 * The filters: status (not in the dead-letter view), endpoint and event type, kept in the hash.
 * @param {Filters} f @param {HTMLSelectElement} endpointSelect
 */
function filterForm(f, endpointSelect) {
  const statusSelect = h(
    'select',
    { id: 'f-status', name: 'status', disabled: f.deadLetters },
    h('option', { value: '' }, 'Any status'),
    DELIVERY_STATUSES.map((s) => h('option', { value: s, selected: s === f.status }, s)),
  );
  // The same choices as the endpoint form's checkboxes, not free text.
  const typeInput = h(
    'select',
    { id: 'f-event-type', name: 'eventType', class: 'mono' },
    h('option', { value: '' }, 'Any event type'),
    KNOWN_EVENT_TYPES.map((t) => h('option', { value: t, selected: t === f.eventType }, t)),
  );
  if (f.eventType !== '' && !KNOWN_EVENT_TYPES.includes(f.eventType))
    typeInput.append(h('option', { value: f.eventType, selected: true }, f.eventType));
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': `Filter ${f.title.toLowerCase()}` },
    f.deadLetters
      ? null
      : h('div', { class: 'field' }, h('label', { for: 'f-status' }, 'Status'), statusSelect),
    h('div', { class: 'field' }, h('label', { for: 'f-endpoint' }, 'Endpoint'), endpointSelect),
    h('div', { class: 'field' }, h('label', { for: 'f-event-type' }, 'Event type'), typeInput),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'button' }, 'Apply filters'),
      h('a', { href: f.base, class: 'button secondary' }, 'Clear'),
    ),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    if (!f.deadLetters && statusSelect.value !== '') params.set('status', statusSelect.value);
    if (endpointSelect.value !== '') params.set('endpoint', endpointSelect.value);
    if (typeInput.value !== '') params.set('eventType', typeInput.value);
    const query = params.toString();
    window.location.hash = query === '' ? f.base : `${f.base}?${query}`;
  });
  return filters;
}

/**
 * The list's columns; with `replayed`, a Replay button on each row.
 * @param {Map<unknown, string>} urls @param {((id: string) => void) | undefined} replayed
 */
function deliveryColumns(urls, replayed) {
  /** @type {Column[]} */
  const columns = [
    {
      label: 'Delivery',
      cell: (d) => {
        const id = str(d.id) ?? '';
        return h('a', { href: `#/deliveries/${encodeURIComponent(id)}`, class: 'mono' }, id);
      },
    },
    { label: 'Event type', cell: (d) => code(deliveryEventType(d)) },
    {
      label: 'Endpoint',
      className: 'wrap',
      cell: (d) => {
        const id = refId(d.endpoint);
        const url = urls.get(id);
        return url !== undefined
          ? breakableUrl(url, 'span', { 'data-endpoint-id': id ?? '', title: id ?? '' })
          : h('span', { class: 'mono', 'data-endpoint-id': id, title: id }, id ?? '—');
      },
    },
    { label: 'Status', cell: (d) => statusBadge(d.status) },
    { label: 'Attempts', cell: (d) => attemptCount(d) ?? dash() },
    { label: 'Created', cell: (d) => time(d.createdAt) },
  ];
  if (replayed !== undefined) {
    columns.push({ label: 'Replay', cell: (d) => replayButton(d, () => replayed(str(d.id) ?? '')) });
  }
  return columns;
}

/**
 * A replayed delivery is no longer dead: it leaves this view, and the notice above the list links
 * to it, so the view keeps showing dead deliveries only.
 * @param {PagedTable} list @param {HTMLElement} replayed @param {string} id
 */
function onReplayed(list, replayed, id) {
  list.replace(id, null);
  replayed.replaceChildren(
    h(
      'p',
      { class: 'notice', role: 'status' },
      'Replay queued for ',
      h('a', { href: `#/deliveries/${encodeURIComponent(id)}`, class: 'mono' }, id),
      '. It left the dead letters; follow it on its page.',
    ),
  );
}
