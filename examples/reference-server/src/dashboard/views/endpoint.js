// @ts-check
/**
 * One endpoint's page: its health over 24 hours or 7 days (`GET /v1/webhook-endpoints/{id}/stats`)
 * as a chart, and "Recover since..." (`POST /v1/webhook-endpoints/{id}/recover`).
 *
 * @typedef {import('../health-chart.js').Bucket} Bucket
 */

import { api } from '../api.js';
import { errorBox, pageHeading, refreshButton } from '../components.js';
import { announce, byId, h } from '../dom.js';
import { healthChart } from '../health-chart.js';
import { obj, statusBadge, str } from '../values.js';

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

/** A `datetime-local` value (local time, minutes) for `ms`. */
function localInput(/** @type {number} */ ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** @param {string} id @param {URLSearchParams} params */
export function endpointView(id, params) {
  const main = byId('main');
  const period = params.get('window') === '7d' ? '7d' : '24h';
  const chartSlot = h('div', { class: 'chart-slot' }, h('p', { class: 'muted' }, 'Loading…'));
  const facts = h('p', { class: 'lead' });
  const since = h('input', {
    id: 'recover-since',
    name: 'since',
    type: 'datetime-local',
    required: true,
    value: localInput(Date.now() - 24 * 3_600_000),
  });
  const recoverSlot = h('div', {});
  const recoverButton = h('button', { type: 'submit', class: 'button' }, 'Recover');
  const recoverForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'recover-heading' },
    h('h2', { id: 'recover-heading' }, 'Recover since…'),
    h(
      'p',
      { class: 'hint' },
      'Sends again every failed or dead delivery to this endpoint created since then, with the same Webhook-Id. A disabled endpoint gets them when it is enabled again.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'recover-since' }, 'Since'), since),
    recoverSlot,
    h('div', { class: 'actions' }, recoverButton),
  );
  recoverForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    recoverSlot.replaceChildren();
    const at = Date.parse(since.value);
    if (Number.isNaN(at)) {
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

  const windowLinks = h(
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

  const load = async () => {
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
      chartSlot.replaceChildren(
        healthChart({
          buckets: buckets(body.buckets),
          bucketSize: str(body.bucketSize) === 'day' ? 'day' : 'hour',
          title: `Attempts to ${url}, ${period === '7d' ? 'per day over the last 7 days' : 'per hour over the last 24 hours'}`,
        }),
      );
    } catch (error) {
      chartSlot.replaceChildren(errorBox(error, { retry: () => void load() }));
    }
  };

  main.replaceChildren(
    pageHeading('Endpoint health', [
      h(
        'a',
        { href: `#/deliveries?endpoint=${encodeURIComponent(id)}`, class: 'button secondary' },
        'Deliveries',
      ),
      refreshButton(() => void load()),
    ]),
    facts,
    windowLinks,
    chartSlot,
    recoverForm,
  );
  main.querySelector('h1')?.focus();
  void load();
}
