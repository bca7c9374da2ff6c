// @ts-check
/**
 * One delivery and its attempt log.
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {import('../dom.js').Child} Child
 * @typedef {{ id: string, main: HTMLElement, summary: HTMLElement, poll: HTMLElement, payload: HTMLElement,
 *   attempts: ReturnType<typeof pagedTable>, shownEvent?: string | undefined, lastStatus?: string | undefined,
 *   lastSeen?: string | undefined }} DeliveryPage
 */

import { api, readOnly } from '../api.js';
import { errorBox, pageHeading, refreshButton } from '../components.js';
import { attemptCount, deliveryEventType, replayButton } from '../delivery-parts.js';
import { announce, byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { pollAfter, stopPolling } from '../polling.js';
import { breakableUrl, code, dash, jsonBlock, obj, refId, statusBadge, str, time } from '../values.js';
import { eventLink } from './event.js';

const DELIVERY_POLL_MS = 2_000;

/**
 * One delivery and its attempt log (`GET /deliveries/{id}` and `/attempts`). While the delivery
 * is pending or retrying it is polled; the page changes only when the delivery does, and focus
 * stays where the user left it.
 * @param {string} id
 */
export function deliveryView(id) {
  /** @type {DeliveryPage} */
  const page = {
    id,
    main: byId('main'),
    summary: h('div', {}),
    poll: h('p', { class: 'muted' }),
    payload: h('div', { class: 'payload' }, h('p', { class: 'muted' }, 'Loading…')),
    attempts: attemptsTable(id),
  };
  page.main.replaceChildren(
    h(
      'p',
      { class: 'breadcrumb' },
      h('a', { href: '#/deliveries' }, 'Deliveries'),
      ' / ',
      h('span', { class: 'mono' }, id),
    ),
    pageHeading('Delivery', [refreshButton(() => void loadDelivery(page, true))]),
    page.summary,
    h('h2', {}, 'Payload'),
    page.payload,
    h('h2', {}, 'Attempt log'),
    page.poll,
    page.attempts.element,
  );
  page.main.querySelector('h1')?.focus();
  void loadDelivery(page);
}

/**
 * The event whose payload is shown: read once, events never change.
 * @param {DeliveryPage} page @param {string} eventId
 * @returns {Promise<void>}
 */
async function showPayload(page, eventId) {
  try {
    const { data } = await api(`/events/${encodeURIComponent(eventId)}`);
    page.payload.replaceChildren(
      h('p', { class: 'hint' }, 'The event this delivery carries, as the API shows it (GET /events/{id}).'),
      jsonBlock(data, `Payload of event ${eventId}`),
    );
  } catch (error) {
    page.payload.replaceChildren(errorBox(error, { retry: () => void showPayload(page, eventId) }));
  }
}

/** @param {string} id */
function attemptsTable(id) {
  return pagedTable({
    path: `/deliveries/${encodeURIComponent(id)}/attempts`,
    caption: 'Attempts',
    empty: 'No attempts yet.',
    columns: [
      { label: 'Time', cell: (a) => time(a.createdAt) },
      {
        label: 'HTTP status',
        cell: (a) =>
          str(a.status) !== undefined
            ? h('span', { class: httpClass(a.status) }, str(a.status) ?? '')
            : h('span', { class: 'muted' }, 'no response'),
      },
      { label: 'Latency', cell: (a) => (str(a.latencyMs) !== undefined ? `${str(a.latencyMs)} ms` : dash()) },
      { label: 'Error', cell: (a) => str(a.error) || dash() },
      {
        label: 'Response body (first 1 KiB)',
        className: 'wrap',
        cell: (a) => {
          const prefix = str(a.responseBodyPrefix);
          return prefix === undefined || prefix === '' ? dash() : h('pre', { class: 'body-prefix' }, prefix);
        },
      },
    ],
  });
}

/**
 * Reads the delivery; re-renders and re-reads the attempts only when it changed.
 * @param {DeliveryPage} page
 * @param {boolean} [force] re-read the attempts even if the delivery looks unchanged
 * @returns {Promise<void>}
 */
async function loadDelivery(page, force = false) {
  const { id, summary } = page;
  stopPolling();
  try {
    const { data } = await api(`/deliveries/${encodeURIComponent(id)}`);
    if (!page.main.contains(summary)) return;
    const d = obj(data) ?? {};
    const status = str(d.status);
    const seen = JSON.stringify(d);
    if (seen !== page.lastSeen) {
      if (page.lastStatus !== undefined && status !== page.lastStatus)
        announce(`Delivery status is now ${status}.`);
      const focused = document.activeElement;
      const hadFocus =
        focused instanceof HTMLElement && summary.contains(focused) ? focused.dataset.focusKey : undefined;
      renderSummary(page, d);
      const again =
        hadFocus === undefined ? null : summary.querySelector(`[data-focus-key="${CSS.escape(hadFocus)}"]`);
      if (again instanceof HTMLElement) again.focus();
      if (page.lastSeen !== undefined) void page.attempts.reload();
    } else if (force) {
      void page.attempts.reload();
    }
    page.lastSeen = seen;
    page.lastStatus = status;
    if (status === 'pending' || status === 'failed') {
      page.poll.textContent = 'This delivery is still in progress; the log refreshes every few seconds.';
      pollAfter(() => void loadDelivery(page), DELIVERY_POLL_MS);
    } else {
      page.poll.textContent = '';
    }
  } catch (error) {
    page.lastSeen = undefined;
    summary.replaceChildren(errorBox(error, { retry: () => void loadDelivery(page, true) }));
  }
}

/** @param {DeliveryPage} page @param {Json} d */
function renderSummary(page, d) {
  const endpoint = refId(d.endpoint);
  const eventId = refId(d.event) ?? str(d.eventId);
  const replay = replayButton(d, () => void loadDelivery(page, true));
  replay.querySelector('button')?.setAttribute('data-focus-key', 'replay');
  page.summary.replaceChildren(
    deliveryFacts(d, endpoint, eventId),
    // Replay is for deliveries that gave up or are failing; a pending or succeeded one has
    // nothing to replay. Absent rather than null: replaceChildren would print "null".
    ...((str(d.status) === 'dead' || str(d.status) === 'failed') && !readOnly()
      ? [
          h(
            'div',
            { class: 'replay-panel' },
            h(
              'p',
              { class: 'hint' },
              'Replay re-queues this delivery: the receiver gets the same Webhook-Id, signed afresh.',
            ),
            replay,
          ),
        ]
      : []),
  );
  if (eventId !== undefined && eventId !== page.shownEvent) {
    page.shownEvent = eventId;
    void showPayload(page, eventId);
  }
  if (endpoint !== undefined) showEndpointUrl(page.summary, endpoint);
}

/** @param {Json} d @param {string | undefined} endpoint @param {string | undefined} eventId */
function deliveryFacts(d, endpoint, eventId) {
  return h(
    'dl',
    { class: 'facts' },
    fact('Status', statusBadge(d.status)),
    fact('Event', eventId === undefined ? dash() : eventLink(eventId)),
    fact('Event type', code(deliveryEventType(d))),
    fact(
      'Endpoint',
      endpoint !== undefined
        ? h(
            'a',
            {
              href: `#/deliveries?endpoint=${encodeURIComponent(endpoint)}`,
              class: 'mono',
              'data-focus-key': 'endpoint',
            },
            endpoint,
          )
        : dash(),
    ),
    fact('Attempts', attemptCount(d) ?? dash()),
    fact('Last attempt', time(d.lastAttemptAt)),
    fact('Next attempt', time(d.nextAttemptAt)),
    fact('Created', time(d.createdAt)),
    fact('Updated', time(d.updatedAt)),
  );
}

/**
 * The endpoint's URL rather than its id, once known.
 * @param {HTMLElement} summary @param {string} endpoint
 */
function showEndpointUrl(summary, endpoint) {
  void api(`/webhook-endpoints/${encodeURIComponent(endpoint)}`)
    .then(({ data }) => {
      const url = str(obj(data)?.url);
      const link = summary.querySelector('[data-focus-key="endpoint"]');
      if (url !== undefined && link !== null) {
        link.replaceChildren(...breakableUrl(url).childNodes);
        link.classList.add('url');
        link.setAttribute('title', endpoint);
      }
    })
    .catch(() => {
      // The id stays shown.
    });
}

/** @param {unknown} status */
function httpClass(status) {
  const n = Number(status);
  return n >= 200 && n < 300 ? 'http-ok' : 'http-fail';
}

/** @param {string} term @param {Child | Child[]} value */
function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}
