// @ts-check
/**
 * One delivery and its attempt log.
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {import('../dom.js').Child} Child
 */

import { api } from '../api.js';
import { errorBox, pageHeading, refreshButton } from '../components.js';
import { attemptCount, deliveryEventType, replayButton } from '../delivery-parts.js';
import { announce, byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { pollAfter, stopPolling } from '../polling.js';
import { breakableUrl, code, dash, jsonBlock, obj, refId, statusBadge, str, time } from '../values.js';
import { eventLink } from './event.js';

const DELIVERY_POLL_MS = 2_000;

/**
 * One delivery and its attempt log (`GET /v1/deliveries/{id}` and `/attempts`). While the delivery
 * is pending or retrying it is polled; the page changes only when the delivery does, and focus
 * stays where the user left it.
 * @param {string} id
 */
export function deliveryView(id) {
  const main = byId('main');
  const summary = h('div', {});
  const poll = h('p', { class: 'muted' });
  const payload = h('div', { class: 'payload' }, h('p', { class: 'muted' }, 'Loading…'));
  /** The event whose payload is shown: read once, events never change. */
  /** @type {string | undefined} */
  let shownEvent;
  /** @param {string} eventId */
  const showPayload = async (eventId) => {
    try {
      const { data } = await api(`/events/${encodeURIComponent(eventId)}`);
      payload.replaceChildren(
        h(
          'p',
          { class: 'hint' },
          'The event this delivery carries, as the API shows it (GET /v1/events/{id}).',
        ),
        jsonBlock(data, `Payload of event ${eventId}`),
      );
    } catch (error) {
      payload.replaceChildren(errorBox(error, { retry: () => void showPayload(eventId) }));
    }
  };
  const attempts = pagedTable({
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
  main.replaceChildren(
    h(
      'p',
      { class: 'breadcrumb' },
      h('a', { href: '#/deliveries' }, 'Deliveries'),
      ' / ',
      h('span', { class: 'mono' }, id),
    ),
    pageHeading('Delivery', [refreshButton(() => void load(true))]),
    summary,
    h('h2', {}, 'Payload'),
    payload,
    h('h2', {}, 'Attempt log'),
    poll,
    attempts.element,
  );
  main.querySelector('h1')?.focus();
  /** @type {string | undefined} */
  let lastStatus;
  /** @type {string | undefined} */
  let lastSeen;

  /** @param {boolean} force re-read the attempts even if the delivery looks unchanged */
  const load = async (force = false) => {
    stopPolling();
    try {
      const { data } = await api(`/deliveries/${encodeURIComponent(id)}`);
      if (!main.contains(summary)) return;
      const d = obj(data) ?? {};
      const status = str(d.status);
      const seen = JSON.stringify(d);
      if (seen !== lastSeen) {
        if (lastStatus !== undefined && status !== lastStatus) announce(`Delivery status is now ${status}.`);
        const focused = document.activeElement;
        const hadFocus =
          focused instanceof HTMLElement && summary.contains(focused) ? focused.dataset.focusKey : undefined;
        renderSummary(d);
        const again =
          hadFocus === undefined ? null : summary.querySelector(`[data-focus-key="${CSS.escape(hadFocus)}"]`);
        if (again instanceof HTMLElement) again.focus();
        if (lastSeen !== undefined) void attempts.reload();
      } else if (force) {
        void attempts.reload();
      }
      lastSeen = seen;
      lastStatus = status;
      if (status === 'pending' || status === 'failed') {
        poll.textContent = 'This delivery is still in progress; the log refreshes every few seconds.';
        pollAfter(() => void load(), DELIVERY_POLL_MS);
      } else {
        poll.textContent = '';
      }
    } catch (error) {
      lastSeen = undefined;
      summary.replaceChildren(errorBox(error, { retry: () => void load(true) }));
    }
  };

  /** @param {Json} d */
  const renderSummary = (d) => {
    const endpoint = refId(d.endpoint);
    const eventId = refId(d.event) ?? str(d.eventId);
    const replay = replayButton(d, () => void load(true));
    replay.querySelector('button')?.setAttribute('data-focus-key', 'replay');
    summary.replaceChildren(
      h(
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
      ),
      // Replay is for deliveries that gave up or are failing; a pending or succeeded one has
      // nothing to replay. Absent rather than null: replaceChildren would print "null".
      ...(str(d.status) === 'dead' || str(d.status) === 'failed'
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
    if (eventId !== undefined && eventId !== shownEvent) {
      shownEvent = eventId;
      void showPayload(eventId);
    }
    // The endpoint's URL rather than its id, once known.
    if (endpoint !== undefined) {
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
  };
  void load();
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
