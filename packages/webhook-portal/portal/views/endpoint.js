// @ts-check
/**
 * One endpoint's page: its health over 24 hours or 7 days (`GET /webhook-endpoints/{id}/stats`)
 * as a chart, its payload filter, "Send test event" (`POST /webhook-endpoints/{id}/test`, the
 * attempt shown as it lands) and "Recover since..." (`POST /webhook-endpoints/{id}/recover`).
 *
 * @typedef {import('../health-chart.js').Bucket} Bucket
 * @typedef {{ id: string, period: string, main: HTMLElement, facts: HTMLElement, chartSlot: HTMLElement,
 *   filterSlot: HTMLElement, testType: HTMLSelectElement }} EndpointPage
 */

import { api, readOnly } from '../api.js';
import { errorBox, pageHeading, refreshButton } from '../components.js';
import { announce, byId, h } from '../dom.js';
import { KNOWN_EVENT_TYPES } from '../event-types.js';
import { healthChart } from '../health-chart.js';
import { pollAfter, stopPolling } from '../polling.js';
import { formatTime, jsonBlock, obj, parseTime, statusBadge, str } from '../values.js';

/** How often the test event's delivery is read again while it is in flight. */
const TEST_POLL_MS = 1_000;

/** @param {unknown} value @returns {Bucket[]} */
function buckets(value) {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw) => {
    const b = obj(raw);
    if (!b) return [];
    const n = (/** @type {unknown} */ v) => (typeof v === 'number' ? v : 0);
    const ms = (/** @type {unknown} */ v) => (typeof v === 'number' ? v : null);
    return [
      {
        start: str(b.start) ?? '',
        end: str(b.end) ?? '',
        succeeded: n(b.succeeded),
        failed: n(b.failed),
        dead: n(b.dead),
        p50LatencyMs: ms(b.p50LatencyMs),
        p95LatencyMs: ms(b.p95LatencyMs),
      },
    ];
  });
}

/** @param {string} id @param {URLSearchParams} params */
export function endpointView(id, params) {
  const main = byId('main');
  const period = params.get('window') === '7d' ? '7d' : '24h';
  const test = testForm(id, main);
  /** @type {EndpointPage} */
  const page = {
    id,
    period,
    main,
    facts: h('p', { class: 'lead' }),
    chartSlot: h('div', { class: 'chart-slot' }, h('p', { class: 'muted' }, 'Loading…')),
    filterSlot: h('div', { class: 'filter-slot' }),
    testType: test.testType,
  };
  const load = () => loadEndpoint(page, load);
  main.replaceChildren(
    pageHeading('Endpoint health', [
      h(
        'a',
        { href: `#/deliveries?endpoint=${encodeURIComponent(id)}`, class: 'button secondary' },
        'Deliveries',
      ),
      refreshButton(() => void load()),
    ]),
    page.facts,
    windowLinks(id, period),
    page.chartSlot,
    page.filterSlot,
    // A read-only session sends no test event and recovers nothing: the forms are left out.
    ...(readOnly() ? [] : [test.form, recoverForm(id)]),
  );
  main.querySelector('h1')?.focus();
  void load();
}

/**
 * "Recover since…": sends again the failed and dead deliveries created since a time.
 * @param {string} id
 */
function recoverForm(id) {
  // Text in the dashboard's one time format (UTC), not a `datetime-local` picker, which shows the
  // browser's locale format and zone beside the UTC times everywhere else on the page.
  const since = h('input', {
    id: 'recover-since',
    name: 'since',
    type: 'text',
    required: true,
    spellcheck: 'false',
    autocomplete: 'off',
    class: 'mono',
    'aria-describedby': 'recover-since-hint',
    value: formatTime(Date.now() - 24 * 3_600_000),
  });
  const recoverSlot = h('div', {});
  const recoverButton = h('button', { type: 'submit', class: 'button' }, 'Recover');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'recover-heading' },
    h('h2', { id: 'recover-heading' }, 'Recover since…'),
    h(
      'p',
      { class: 'hint' },
      'Sends again every failed or dead delivery to this endpoint created since then, with the same Webhook-Id. A disabled endpoint gets them when it is enabled again.',
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'recover-since' }, 'Since'),
      h('p', { id: 'recover-since-hint', class: 'hint' }, 'A time in UTC, as 2026-11-27 09:42:26 UTC.'),
      since,
    ),
    recoverSlot,
    h('div', { class: 'actions' }, recoverButton),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    recoverSlot.replaceChildren();
    const at = parseTime(since.value);
    since.setAttribute('aria-invalid', String(at === undefined));
    if (at === undefined) {
      recoverSlot.replaceChildren(
        h('p', { class: 'error', role: 'alert' }, 'Write the time as 2026-11-27 09:42:26 UTC.'),
      );
      since.focus();
      return;
    }
    recoverButton.disabled = true;
    try {
      const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}/recover`, {
        method: 'POST',
        body: { since: new Date(at).toISOString() },
      });
      const n = Number(obj(data)?.recovered ?? 0);
      const message = `${n} ${n === 1 ? 'delivery' : 'deliveries'} re-queued.`;
      recoverSlot.replaceChildren(h('p', { class: 'notice', role: 'status' }, message));
      announce(message);
    } catch (error) {
      recoverSlot.replaceChildren(errorBox(error));
    } finally {
      recoverButton.disabled = false;
    }
  });
  return form;
}

/**
 * "Send a test event": the type picker offers what the endpoint carries, once it is loaded.
 * @param {string} id
 * @param {HTMLElement} main
 */
function testForm(id, main) {
  const testType = h('select', { id: 'test-event-type', name: 'eventType' });
  const testSlot = h('div', { 'aria-live': 'polite' });
  const testButton = h('button', { type: 'submit', class: 'button' }, 'Send test event');
  const testForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'test-heading' },
    h('h2', { id: 'test-heading' }, 'Send a test event'),
    h(
      'p',
      { class: 'hint' },
      'Sends this endpoint alone the documented example of the type, marked "test": true, signed and logged like any other delivery. The filter does not apply.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'test-event-type' }, 'Event type'), testType),
    testSlot,
    h('div', { class: 'actions' }, testButton),
  );
  testForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    testSlot.replaceChildren();
    testButton.disabled = true;
    try {
      const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}/test`, {
        method: 'POST',
        body: { eventType: testType instanceof HTMLSelectElement ? testType.value : '' },
      });
      const deliveryId = str(obj(data)?.id);
      announce('Test event queued.');
      if (deliveryId !== undefined) await watchTest(main, testSlot, deliveryId);
    } catch (error) {
      testSlot.replaceChildren(errorBox(error));
    } finally {
      testButton.disabled = false;
    }
  });
  return { form: testForm, testType };
}

/**
 * Shows the test delivery and its attempts, read again while it is in flight.
 * @param {HTMLElement} main @param {HTMLElement} testSlot @param {string} deliveryId
 * @returns {Promise<void>}
 */
async function watchTest(main, testSlot, deliveryId) {
  stopPolling();
  try {
    const [delivery, attempts] = await Promise.all([
      api(`/deliveries/${encodeURIComponent(deliveryId)}`),
      api(`/deliveries/${encodeURIComponent(deliveryId)}/attempts`),
    ]);
    if (!main.contains(testSlot)) return;
    const d = obj(delivery.data) ?? {};
    const list = Array.isArray(obj(attempts.data)?.data)
      ? /** @type {unknown[]} */ (obj(attempts.data)?.data)
      : [];
    const status = str(d.status) ?? 'pending';
    const rows = list.flatMap((raw) => {
      const a = obj(raw);
      if (!a) return [];
      const http = str(a.status);
      const latency = str(a.latencyMs);
      return [
        h(
          'li',
          { class: 'test-attempt' },
          http === undefined ? `No answer: ${str(a.error) ?? 'connection failed'}` : `HTTP ${http}`,
          latency === undefined ? '' : ` in ${latency} ms`,
        ),
      ];
    });
    testSlot.replaceChildren(
      h(
        'p',
        { class: 'notice', role: 'status' },
        'Test delivery ',
        h('a', { href: `#/deliveries/${encodeURIComponent(deliveryId)}`, class: 'mono' }, deliveryId),
        ' ',
        statusBadge(status),
      ),
      rows.length === 0
        ? h('p', { class: 'muted' }, 'Waiting for the first attempt…')
        : h('ul', { class: 'test-attempts' }, rows),
    );
    if (status === 'pending' || (status === 'failed' && rows.length === 0)) {
      pollAfter(() => void watchTest(main, testSlot, deliveryId), TEST_POLL_MS);
    } else {
      announce(`Test delivery ${status}.`);
    }
  } catch (error) {
    testSlot.replaceChildren(errorBox(error));
  }
}

/** @param {string} id @param {string} period */
function windowLinks(id, period) {
  return h(
    'nav',
    { class: 'window-choice', 'aria-label': 'Period' },
    ['24h', '7d'].map((w) =>
      h(
        'a',
        {
          href: `#/endpoints/${encodeURIComponent(id)}?window=${w}`,
          class: `button secondary small${w === period ? ' selected' : ''}`,
          'aria-current': w === period ? 'page' : null,
        },
        w === '24h' ? 'Last 24 hours' : 'Last 7 days',
      ),
    ),
  );
}

/**
 * Reads the endpoint and its stats, and fills the page.
 * @param {EndpointPage} page
 * @param {() => Promise<void>} retry
 */
async function loadEndpoint(page, retry) {
  const { id, period, facts, filterSlot, testType, chartSlot } = page;
  try {
    const [endpoint, stats] = await Promise.all([
      api(`/webhook-endpoints/${encodeURIComponent(id)}`),
      api(`/webhook-endpoints/${encodeURIComponent(id)}/stats`, { query: { window: period } }),
    ]);
    const ep = obj(endpoint.data) ?? {};
    const body = obj(stats.data) ?? {};
    const url = str(ep.url) ?? id;
    document.title = `${url} · Holdfast dashboard`;
    facts.replaceChildren(
      h('span', { class: 'mono' }, url),
      ' ',
      statusBadge(ep.status),
      ' ',
      h(
        'span',
        { class: 'muted' },
        str(ep.ordering) === 'per-resource' ? 'Ordered per resource' : 'Unordered',
      ),
    );
    const filter = obj(ep.filter);
    filterSlot.replaceChildren(
      h('h2', {}, 'Filter'),
      filter === undefined
        ? h('p', { class: 'muted' }, 'No filter: every event of the subscribed types is delivered.')
        : jsonBlock(filter, 'Filter'),
    );
    const types = Array.isArray(ep.eventTypes) ? ep.eventTypes.flatMap((t) => str(t) ?? []) : [];
    const carried = types.length === 0 || types.includes('*') ? KNOWN_EVENT_TYPES : types;
    const chosen = testType instanceof HTMLSelectElement ? testType.value : '';
    testType.replaceChildren(...carried.map((t) => h('option', { value: t, selected: t === chosen }, t)));
    chartSlot.replaceChildren(
      healthChart({
        buckets: buckets(body.buckets),
        title: `Attempts to ${url}, ${period === '7d' ? 'per day over the last 7 days' : 'per hour over the last 24 hours'}`,
      }),
    );
  } catch (error) {
    chartSlot.replaceChildren(errorBox(error, { retry: () => void retry() }));
  }
}
