// @ts-check
/**
 * The endpoint health chart: attempts per bucket stacked by outcome (succeeded, failed, dead) with
 * the p95 latency as a line, drawn as inline SVG by this code (no library, nothing fetched), and
 * a table of the same numbers as its text alternative. The SVG scales with its container
 * (viewBox), so it stays readable on a 375 px screen.
 *
 * @typedef {{ start: string, end: string, succeeded: number, failed: number, dead: number, p50LatencyMs: number | null, p95LatencyMs: number | null }} Bucket
 * @typedef {{ plotW: number, plotH: number, slot: number, barW: number, maxCount: number, maxLatency: number,
 *   y: (count: number) => number, ly: (ms: number) => number }} Scale
 */

import { h } from './dom.js';
import { formatTime } from './values.js';

const SVG = 'http://www.w3.org/2000/svg';
// Wide rather than tall: at a card's full width the chart stays about a third as high as wide.
const WIDTH = 960;
const HEIGHT = 300;
const PAD = { top: 16, right: 64, bottom: 32, left: 40 };
const OUTCOMES = /** @type {const} */ (['succeeded', 'failed', 'dead']);

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 * @param {(Element | string)[]} [children]
 */
function svg(tag, attrs, children = []) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return el;
}

/**
 * A bucket's start in the dashboard's one time format, for the axis, the tooltips and the table alike.
 * @param {string} iso
 */
function label(iso) {
  return formatTime(iso) ?? iso;
}

/**
 * @param {{ buckets: Bucket[], title: string, now?: number }} stats `now` (epoch ms, default the
 *   clock) caps the axis: the last bucket is still running, and its end is not a time to label yet.
 * @returns {HTMLElement}
 */
export function healthChart({ buckets, title, now = Date.now() }) {
  const scale = scaleOf(buckets);
  const summary = summaryOf(buckets);
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'health-chart',
    role: 'img',
    'aria-labelledby': 'health-chart-title health-chart-desc',
  });
  chart.append(
    svg('title', { id: 'health-chart-title' }, [title]),
    svg('desc', { id: 'health-chart-desc' }, [summary]),
    ...axes(scale, buckets, now),
    svg(
      'g',
      { class: 'bars' },
      buckets.map((b, i) => barGroup(scale, b, i)),
    ),
    ...latencyLine(scale, buckets),
  );
  const figure = h('figure', { class: 'health' }, h('figcaption', {}, summary), legend());
  figure.append(chart);
  figure.append(h('details', {}, h('summary', {}, 'Show the numbers'), numbersTable(buckets, title)));
  return figure;
}

/** @param {Bucket[]} buckets @returns {Scale} */
function scaleOf(buckets) {
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const totals = buckets.map((b) => b.succeeded + b.failed + b.dead);
  const maxCount = Math.max(1, ...totals);
  const latencies = buckets.flatMap((b) => (b.p95LatencyMs === null ? [] : [b.p95LatencyMs]));
  const maxLatency = Math.max(1, ...latencies);
  const slot = plotW / Math.max(1, buckets.length);
  return {
    plotW,
    plotH,
    slot,
    barW: Math.max(2, slot * 0.7),
    maxCount,
    maxLatency,
    y: (count) => PAD.top + plotH - (count / maxCount) * plotH,
    ly: (ms) => PAD.top + plotH - (ms / maxLatency) * plotH,
  };
}

/** The chart's one-line description: totals by outcome and the highest p95. @param {Bucket[]} buckets */
function summaryOf(buckets) {
  const latencies = buckets.flatMap((b) => (b.p95LatencyMs === null ? [] : [b.p95LatencyMs]));
  const all = buckets.reduce((n, b) => n + b.succeeded + b.failed + b.dead, 0);
  const sum = (/** @type {'succeeded' | 'failed' | 'dead'} */ k) => buckets.reduce((n, b) => n + b[k], 0);
  const summary = `${all} attempts: ${sum('succeeded')} succeeded, ${sum('failed')} failed, ${sum('dead')} dead; highest p95 latency ${latencies.length === 0 ? 'none' : `${Math.max(...latencies)} ms`}.`;
  return summary;
}

/**
 * Axes and their scales: counts on the left, p95 latency on the right, the window's span below.
 * @param {Scale} scale @param {Bucket[]} buckets @param {number} now
 * @returns {Element[]}
 */
function axes({ plotW, plotH, maxCount, maxLatency }, buckets, now) {
  const marks = [
    svg('line', {
      x1: PAD.left,
      y1: PAD.top + plotH,
      x2: PAD.left + plotW,
      y2: PAD.top + plotH,
      class: 'axis',
    }),
    svg('text', { x: PAD.left - 4, y: PAD.top + 4, class: 'tick', 'text-anchor': 'end' }, [String(maxCount)]),
    svg('text', { x: PAD.left - 4, y: PAD.top + plotH, class: 'tick', 'text-anchor': 'end' }, ['0']),
    svg('text', { x: PAD.left + plotW + 4, y: PAD.top + 4, class: 'tick latency' }, [`${maxLatency} ms`]),
  ];
  const first = buckets[0];
  const last = buckets[buckets.length - 1];
  if (first === undefined || last === undefined) return marks;
  return [
    ...marks,
    // The axis spans the window: from the first bucket's start to the last one's end, or to
    // now while that bucket is still filling (never a time that has not come yet).
    svg('text', { x: PAD.left, y: HEIGHT - 8, class: 'tick', 'data-axis': 'start' }, [label(first.start)]),
    svg(
      'text',
      { x: PAD.left + plotW, y: HEIGHT - 8, class: 'tick', 'text-anchor': 'end', 'data-axis': 'end' },
      [formatTime(Math.min(Date.parse(last.end || last.start), now)) ?? ''],
    ),
  ];
}

/**
 * One bucket's stacked bar, with its numbers as a tooltip and data attributes.
 * @param {Scale} scale @param {Bucket} b @param {number} i
 */
function barGroup({ slot, barW, y }, b, i) {
  const x = PAD.left + i * slot + (slot - barW) / 2;
  const group = svg('g', {
    class: 'bucket',
    'data-start': b.start,
    'data-succeeded': b.succeeded,
    'data-failed': b.failed,
    'data-dead': b.dead,
  });
  group.append(
    svg('title', {}, [
      `${label(b.start)}: ${b.succeeded} succeeded, ${b.failed} failed, ${b.dead} dead, p95 ${b.p95LatencyMs ?? '—'} ms`,
    ]),
  );
  let base = 0;
  for (const outcome of OUTCOMES) {
    const count = b[outcome];
    if (count === 0) continue;
    group.append(
      svg('rect', {
        x: x.toFixed(2),
        y: y(base + count).toFixed(2),
        width: barW.toFixed(2),
        height: (y(base) - y(base + count)).toFixed(2),
        class: `bar ${outcome}`,
        'data-outcome': outcome,
        'data-count': count,
      }),
    );
    base += count;
  }
  return group;
}

/**
 * The p95 latency as a line, and a dot per bucket, so a single bucket's p95 shows too.
 * @param {Scale} scale @param {Bucket[]} buckets
 * @returns {Element[]}
 */
function latencyLine({ slot, ly }, buckets) {
  const points = buckets.flatMap((b, i) =>
    b.p95LatencyMs === null
      ? []
      : [`${(PAD.left + i * slot + slot / 2).toFixed(2)},${ly(b.p95LatencyMs).toFixed(2)}`],
  );
  if (points.length === 0) return [];
  return [
    svg('polyline', { points: points.join(' '), class: 'p95' }),
    ...points.map((point) => {
      const [cx = '0', cy = '0'] = point.split(',');
      return svg('circle', { cx, cy, r: 3, class: 'p95-point' });
    }),
  ];
}

function legend() {
  return h(
    'ul',
    { class: 'chart-legend' },
    h('li', {}, h('span', { class: 'swatch succeeded' }), 'Succeeded'),
    h('li', {}, h('span', { class: 'swatch failed' }), 'Failed'),
    h('li', {}, h('span', { class: 'swatch dead' }), 'Dead'),
    h('li', {}, h('span', { class: 'swatch p95' }), 'p95 latency'),
  );
}

/** The same numbers as a table: the chart's text alternative. @param {Bucket[]} buckets @param {string} title */
function numbersTable(buckets, title) {
  return h(
    'table',
    { class: 'health-table' },
    h('caption', {}, `${title}, as a table`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Bucket', 'Succeeded', 'Failed', 'Dead', 'p50 ms', 'p95 ms'].map((t) =>
          h('th', { scope: 'col' }, t),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      buckets.map((b) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, label(b.start)),
          h('td', {}, String(b.succeeded)),
          h('td', {}, String(b.failed)),
          h('td', {}, String(b.dead)),
          h('td', {}, b.p50LatencyMs === null ? '—' : String(b.p50LatencyMs)),
          h('td', {}, b.p95LatencyMs === null ? '—' : String(b.p95LatencyMs)),
        ),
      ),
    ),
  );
}
