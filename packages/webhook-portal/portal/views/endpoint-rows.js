// @ts-check
/**
 * The endpoints list's cells and row actions: enable or disable, rotate the secret, delete.
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {ReturnType<typeof import('../paged-table.js').pagedTable>} PagedTable
 * @typedef {import('../paged-table.js').Column} Column
 * @typedef {{ main: HTMLElement, heading: HTMLElement, formSlot: HTMLElement, secretSlot: HTMLElement,
 *   list: PagedTable, openForm: (existing?: Json) => void }} EndpointsPage
 */

import { api, readOnly } from '../api.js';
import { confirmDialog, copyButton, errorBox } from '../components.js';
import { announce, h } from '../dom.js';
import { secretPanel } from '../secret-panel.js';
import { breakableUrl, dash, jsonBlock, obj, statusBadge, str, time } from '../values.js';

/**
 * The list's columns; the row actions act on `page`.
 * @param {EndpointsPage} page
 * @returns {Column[]}
 */
export function endpointColumns(page) {
  return [
    {
      label: 'URL',
      className: 'wrap',
      cell: (ep) => [breakableUrl(ep.url), h('br'), h('small', { class: 'muted' }, str(ep.id) ?? '')],
    },
    { label: 'Description', cell: (ep) => str(ep.description) || dash() },
    { label: 'Event types', cell: eventTypesCell },
    { label: 'Status', cell: (ep) => statusBadge(ep.status) },
    { label: 'Signature', className: 'wrap', cell: signatureCell },
    // The adaptive in-flight limit and the rate ceiling.
    { label: 'Pacing', cell: pacingCell },
    { label: 'Created', cell: (ep) => time(ep.createdAt) },
    { label: 'Actions', cell: (ep) => rowActions(page, ep) },
  ];
}

/** @param {Json} ep */
function eventTypesCell(ep) {
  const types = Array.isArray(ep.eventTypes) ? ep.eventTypes.flatMap((t) => str(t) ?? []) : [];
  const filter = obj(ep.filter);
  return [
    types.length === 0
      ? h('span', { class: 'muted' }, 'All events')
      : h(
          'ul',
          { class: 'tags' },
          types.map((t) => h('li', {}, t)),
        ),
    // A filter may hold a real null: shown as JSON text in a block, never as a bare value.
    filter === undefined
      ? null
      : h('details', { class: 'filter-summary' }, h('summary', {}, 'Filtered'), jsonBlock(filter, 'Filter')),
  ];
}

/** @param {Json} ep */
function pacingCell(ep) {
  const concurrency = obj(ep.concurrency);
  const current = str(concurrency?.current);
  const max = str(concurrency?.max);
  // `current` is the adaptive limit on attempts in flight, not how many are in flight now;
  // the API reports no in-flight count, so none is shown.
  const inFlight = str(concurrency?.inFlight);
  const rate = typeof ep.maxPerSecond === 'number' ? `at most ${ep.maxPerSecond}/s` : 'no rate limit';
  const ordered = str(ep.ordering) === 'per-resource';
  return h(
    'span',
    {},
    current !== undefined && max !== undefined
      ? h(
          'span',
          {
            class: 'pacing-limit',
            title: 'Attempts allowed in flight at once: the adaptive limit now, and its ceiling.',
          },
          `limit ${current} (max ${max})`,
        )
      : dash(),
    inFlight !== undefined ? [h('br', {}), `${inFlight} in flight`] : [],
    h('br', {}),
    h('span', { class: 'muted' }, rate),
    h('br', {}),
    h(
      'span',
      {
        class: 'muted',
        title: ordered
          ? 'Deliveries of one resource go one at a time, in the order of their events.'
          : 'Deliveries go side by side, in no particular order.',
      },
      ordered ? 'ordered per resource' : 'unordered',
    ),
  );
}

/**
 * A small button of a row, labelled with the endpoint it acts on.
 * @param {string} text @param {string} ariaLabel @param {() => void} onclick @param {string} [kind]
 */
function rowButton(text, ariaLabel, onclick, kind = 'secondary') {
  return h(
    'button',
    { type: 'button', class: `button ${kind} small`, 'aria-label': ariaLabel, onclick },
    text,
  );
}

/**
 * @param {EndpointsPage} page
 * @param {Json} ep
 */
function rowActions(page, ep) {
  const id = str(ep.id) ?? '';
  const label = str(ep.url) ?? id;
  /** @param {string} href @param {string} ariaLabel @param {string} text */
  const link = (href, ariaLabel, text) =>
    h('a', { href, class: 'button secondary small', 'aria-label': ariaLabel }, text);
  return h(
    'div',
    { class: 'row-actions' },
    link(`#/deliveries?endpoint=${encodeURIComponent(id)}`, `Deliveries to ${label}`, 'Deliveries'),
    link(`#/endpoints/${encodeURIComponent(id)}`, `Health of ${label}`, 'Health'),
    ...(readOnly() ? [] : writeActions(page, ep)),
  );
}

/**
 * The row's controls that change the endpoint, left out for a read-only session.
 * @param {EndpointsPage} page
 * @param {Json} ep
 */
function writeActions(page, ep) {
  const disabled = str(ep.status) === 'disabled';
  const label = str(ep.url) ?? str(ep.id) ?? '';
  return [
    rowButton('Edit', `Edit ${label}`, () => page.openForm(ep)),
    h(
      'button',
      {
        type: 'button',
        class: 'button secondary small',
        'aria-label': `${disabled ? 'Enable' : 'Disable'} ${label}`,
        onclick: (event) => void setEnabled(page, ep, disabled, event),
      },
      disabled ? 'Enable' : 'Disable',
    ),
    rowButton('Rotate secret', `Rotate secret of ${label}`, () => void rotate(page, ep)),
    rowButton('Delete', `Delete ${label}`, () => void remove(page, ep), 'danger'),
  ];
}

/**
 * Shows a signing secret once, in its panel.
 * @param {EndpointsPage} page @param {unknown} secret @param {string} title
 */
export function showSecret(page, secret, title) {
  const panel = secretPanel(str(secret), title, () => page.heading.focus());
  page.secretSlot.replaceChildren(panel);
  panel.focus();
  announce('Signing secret shown. Copy it now: it is shown only once.');
}

/** @param {EndpointsPage} page @param {Json} ep @param {boolean} enable @param {Event} event */
async function setEnabled(page, ep, enable, event) {
  const id = str(ep.id) ?? '';
  const button = event.currentTarget instanceof HTMLButtonElement ? event.currentTarget : null;
  if (button) button.disabled = true;
  try {
    const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      body: { status: enable ? 'active' : 'disabled' },
    });
    const updated = obj(data) ?? { ...ep, status: enable ? 'active' : 'disabled' };
    page.list.replace(id, updated);
    announce(`Endpoint ${enable ? 'enabled' : 'disabled'}.`);
    const row = page.main.querySelector(`tr[data-id="${CSS.escape(id)}"]`);
    const again = row?.querySelector(`button[aria-label^="${enable ? 'Disable' : 'Enable'}"]`);
    if (again instanceof HTMLElement) again.focus();
  } catch (error) {
    if (button) button.disabled = false;
    page.formSlot.replaceChildren(errorBox(error));
  }
}

/** @param {EndpointsPage} page @param {Json} ep */
async function rotate(page, ep) {
  const id = str(ep.id) ?? '';
  const ok = await confirmDialog({
    title: 'Rotate the signing secret?',
    body: `A new secret is created for ${str(ep.url) ?? id}. The old one keeps signing for 24 hours, so receivers can switch without missing a delivery.`,
    confirm: 'Rotate secret',
  });
  if (!ok) return;
  try {
    const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`, {
      method: 'POST',
    });
    const body = obj(data) ?? {};
    // A v1a endpoint's signing key never leaves the server: its new public key is in the list.
    if (str(body.secret) === undefined) {
      page.list.replace(id, body);
      announce('New key pair created. Receivers verify with the public key shown in the list.');
    } else showSecret(page, body.secret, `New signing secret for ${str(body.url) ?? str(ep.url) ?? id}`);
  } catch (error) {
    page.formSlot.replaceChildren(errorBox(error));
  }
}

/** @param {EndpointsPage} page @param {Json} ep */
async function remove(page, ep) {
  const id = str(ep.id) ?? '';
  const ok = await confirmDialog({
    title: 'Delete this endpoint?',
    body: `${str(ep.url) ?? id} stops receiving webhooks. This cannot be undone.`,
    confirm: 'Delete endpoint',
    danger: true,
  });
  if (!ok) return;
  try {
    await api(`/webhook-endpoints/${encodeURIComponent(id)}`, { method: 'DELETE' });
    page.list.replace(id, null);
    announce('Endpoint deleted.');
    page.heading.focus();
  } catch (error) {
    page.formSlot.replaceChildren(errorBox(error));
  }
}

/**
 * The endpoint's signature scheme, and for v1a its public key with a copy button: receivers
 * verify v1a deliveries with it, so it is shown in full (it is not a secret).
 *
 * @param {Json} ep
 */
function signatureCell(ep) {
  const key = str(ep.publicKey);
  if (str(ep.signatureScheme) !== 'v1a' || !key)
    return h('span', {}, 'v1 ', h('small', { class: 'muted' }, 'HMAC'));
  const label = str(ep.url) ?? str(ep.id) ?? '';
  return [
    h('span', {}, 'v1a ', h('small', { class: 'muted' }, 'ed25519')),
    h('br'),
    h('span', { class: 'mono', title: 'Public key' }, key),
    ' ',
    copyButton(key, `Copy public key of ${label}`),
  ];
}
