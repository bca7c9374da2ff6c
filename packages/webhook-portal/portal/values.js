// @ts-check
/**
 * Values from the API, read defensively: a missing field renders as a dash, never as "undefined".
 *
 * @typedef {{ [key: string]: unknown }} Json
 */

import { h } from './dom.js';

/**
 * @param {unknown} value
 * @returns {string | undefined}
 */
export function str(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * @param {unknown} value
 * @returns {Json | undefined}
 */
export function obj(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? /** @type {Json} */ (value)
    : undefined;
}

/**
 * An id given either as a string or as an expanded object with an `id`.
 * @param {unknown} value
 */
export function refId(value) {
  return str(value) ?? str(obj(value)?.id);
}

/**
 * The one way the dashboard writes a time, on every page and in the health chart:
 * `2026-11-27 09:42:26 UTC`. Always UTC and always named, whatever the browser's locale or zone, so
 * two times on a page compare at a glance and match the API's ISO timestamps and server logs.
 * @param {Date | number | string} value a Date, epoch milliseconds or an ISO timestamp
 * @returns {string | undefined} undefined for a value that is no valid time
 */
export function formatTime(value) {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/**
 * A time typed by a person, read as UTC: what {@link formatTime} writes (seconds and the `UTC`
 * optional), or ISO with a `T`. Undefined for anything else, so a form refuses it.
 * @param {string} text
 * @returns {number | undefined} epoch milliseconds
 */
export function parseTime(text) {
  const match = /^\s*(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:\.\d+)?\s*(?:UTC|Z)?\s*$/i.exec(text);
  if (match === null) return undefined;
  const at = Date.parse(`${match[1]}T${match[2]}${match[3] ?? ':00'}Z`);
  return Number.isNaN(at) ? undefined : at;
}

/** @param {unknown} iso */
export function time(iso) {
  const text = str(iso);
  if (text === undefined) return dash();
  const shown = formatTime(text);
  if (shown === undefined) return h('span', {}, text);
  // A narrow column wraps it between the date and the clock, never inside either.
  const [date, clock] = [shown.slice(0, 10), shown.slice(11)];
  return h(
    'time',
    { datetime: text, title: text },
    h('span', { class: 'nowrap' }, date),
    ' ',
    h('span', { class: 'nowrap' }, clock),
  );
}

export function dash() {
  return h('span', { class: 'muted', 'aria-label': 'none' }, '—');
}

/** @param {unknown} status */
export function statusBadge(status) {
  const text = str(status) ?? 'unknown';
  return h('span', { class: `badge badge-${text.replace(/[^a-z_]/g, '')}` }, text);
}

/** @param {unknown} value */
export function code(value) {
  const text = str(value);
  return text === undefined ? dash() : h('code', {}, text);
}

/**
 * A URL that wraps only between its parts: a `<wbr>` after each `/`, `?` and `&` and before each
 * `=`, so a narrow cell breaks it at a separator rather than mid-word.
 * @param {unknown} value
 * @param {string} [tag] the element to build, `span` unless given
 * @param {Record<string, string>} [attrs]
 */
export function breakableUrl(value, tag = 'span', attrs = {}) {
  const text = str(value);
  if (text === undefined) return dash();
  const el = document.createElement(tag);
  for (const [name, v] of Object.entries(attrs)) el.setAttribute(name, v);
  el.classList.add('mono', 'url');
  for (const part of text.split(/(?<=[/?&])|(?==)/)) {
    if (el.childNodes.length > 0) el.append(document.createElement('wbr'));
    el.append(document.createTextNode(part));
  }
  return el;
}

/**
 * JSON pretty-printed into a `<pre>` as text (never markup), so whatever a payload holds is
 * shown, escaped, as it is.
 * @param {unknown} value
 * @param {string} label what the block is, for assistive technology
 */
export function jsonBlock(value, label) {
  const pre = document.createElement('pre');
  pre.className = 'json-block';
  pre.tabIndex = 0;
  pre.setAttribute('aria-label', label);
  pre.textContent = JSON.stringify(value, null, 2) ?? '';
  return pre;
}
