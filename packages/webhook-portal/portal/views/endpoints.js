// @ts-check
/**
 * The endpoints view: list, add, edit, enable or disable, rotate the secret, delete.
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {import('../app.js').Route} Route
 * @typedef {import('./endpoint-rows.js').EndpointsPage} EndpointsPage
 */

import { readOnly } from '../api.js';
import { refreshButton } from '../components.js';
import { byId, h } from '../dom.js';
import { pagedTable } from '../paged-table.js';
import { obj } from '../values.js';
import { endpointForm } from './endpoint-form.js';
import { endpointColumns } from './endpoint-rows.js';

/** @param {Route} _route */
export function endpointsView(_route) {
  const main = byId('main');
  const formSlot = h('div', {});
  const heading = h('h1', { tabindex: '-1' }, 'Webhook endpoints');
  /** @param {Json} [existing] */
  const openForm = (existing) => {
    const form = endpointForm(page, existing);
    formSlot.replaceChildren(form);
    form.querySelector('input')?.focus();
  };
  // The columns' actions need the list they sit in: it is set before any row renders.
  const page = /** @type {EndpointsPage} */ (
    /** @type {unknown} */ ({
      main,
      heading,
      formSlot,
      secretSlot: h('div', { id: 'secret-slot' }),
      openForm,
    })
  );
  page.list = pagedTable({
    path: '/webhook-endpoints',
    caption: 'Webhook endpoints',
    empty: 'No endpoints yet. Add one to start receiving webhooks.',
    cards: true,
    columns: endpointColumns(page),
  });
  // A read-only session sees no control that writes.
  const add = readOnly()
    ? undefined
    : h('button', { type: 'button', class: 'button', onclick: () => openForm() }, 'Add endpoint');
  document.title = 'Webhook endpoints · Holdfast dashboard';
  main.replaceChildren(
    h(
      'div',
      { class: 'page-heading' },
      heading,
      h(
        'div',
        { class: 'actions' },
        add,
        refreshButton(() => void page.list.reload()),
      ),
    ),
    sourceAddressesLine(),
    page.secretSlot,
    formSlot,
    page.list.element,
  );
  heading.focus();
}

/**
 * "Webhooks are sent from: …", from the public `/webhook-source-addresses` (no key), for
 * receivers' allowlists. Text nodes only; a failure leaves the line out.
 */
function sourceAddressesLine() {
  const line = h('p', { class: 'muted', id: 'webhook-source-addresses' });
  void fetch('/webhook-source-addresses', { headers: { accept: 'application/json' } })
    .then((response) => (response.ok ? response.json() : undefined))
    .then((/** @type {unknown} */ body) => {
      const doc = obj(body);
      if (!doc) return;
      const addresses = Array.isArray(doc.addresses)
        ? doc.addresses.filter((a) => typeof a === 'string')
        : [];
      line.replaceChildren(
        'Webhooks are sent from: ',
        addresses.length > 0
          ? h('span', { class: 'mono' }, addresses.join(', '))
          : 'no published addresses (not configured)',
        ' ',
        h('a', { href: '/webhook-source-addresses' }, '(list)'),
      );
    })
    .catch(() => {});
  return line;
}
