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

/** @param {unknown} iso */
export function time(iso) {
  const text = str(iso);
  if (text === undefined) return dash();
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return h('span', {}, text);
  const shown = date.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return h('time', { datetime: text, title: text }, shown);
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
