// @ts-check
/**
 * The endpoints view: list, add, edit, enable or disable, rotate the secret, delete.
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {import('../app.js').Route} Route
 */

import { ApiError, api } from '../api.js';
import { confirmDialog, copyButton, errorBox, refreshButton } from '../components.js';
import { announce, byId, h } from '../dom.js';
import { KNOWN_EVENT_TYPES } from '../event-types.js';
import { pagedTable } from '../paged-table.js';
import { secretPanel } from '../secret-panel.js';
import { breakableUrl, dash, jsonBlock, obj, statusBadge, str, time } from '../values.js';

/** @param {Route} _route */
export function endpointsView(_route) {
  const main = byId('main');
  const secretSlot = h('div', { id: 'secret-slot' });
  const formSlot = h('div', {});
  const heading = h('h1', { tabindex: '-1' }, 'Webhook endpoints');

  /** @param {Json} ep */
  const actions = (ep) => {
    const id = str(ep.id) ?? '';
    const disabled = str(ep.status) === 'disabled';
    const label = str(ep.url) ?? id;
    return h(
      'div',
      { class: 'row-actions' },
      h(
        'a',
        {
          href: `#/deliveries?endpoint=${encodeURIComponent(id)}`,
          class: 'button secondary small',
          'aria-label': `Deliveries to ${label}`,
        },
        'Deliveries',
      ),
      h(
        'a',
        {
          href: `#/endpoints/${encodeURIComponent(id)}`,
          class: 'button secondary small',
          'aria-label': `Health of ${label}`,
        },
        'Health',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'aria-label': `Edit ${label}`,
          onclick: () => {
            const form = endpointForm(ep);
            formSlot.replaceChildren(form);
            form.querySelector('input')?.focus();
          },
        },
        'Edit',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'aria-label': `${disabled ? 'Enable' : 'Disable'} ${label}`,
          onclick: (event) => void setEnabled(ep, disabled, event),
        },
        disabled ? 'Enable' : 'Disable',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'aria-label': `Rotate secret of ${label}`,
          onclick: () => void rotate(ep),
        },
        'Rotate secret',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'button danger small',
          'aria-label': `Delete ${label}`,
          onclick: () => void remove(ep),
        },
        'Delete',
      ),
    );
  };

  const list = pagedTable({
    path: '/webhook-endpoints',
    caption: 'Webhook endpoints',
    empty: 'No endpoints yet. Add one to start receiving webhooks.',
    cards: true,
    columns: [
      {
        label: 'URL',
        className: 'wrap',
        cell: (ep) => [breakableUrl(ep.url), h('br'), h('small', { class: 'muted' }, str(ep.id) ?? '')],
      },
      { label: 'Description', cell: (ep) => str(ep.description) || dash() },
      {
        label: 'Event types',
        cell: (ep) => {
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
              : h(
                  'details',
                  { class: 'filter-summary' },
                  h('summary', {}, 'Filtered'),
                  jsonBlock(filter, 'Filter'),
                ),
          ];
        },
      },
      { label: 'Status', cell: (ep) => statusBadge(ep.status) },
      { label: 'Signature', className: 'wrap', cell: signatureCell },
      {
        // CONTRACT section 10 "Delivery pacing": the adaptive in-flight limit and the rate ceiling.
        label: 'Pacing',
        cell: (ep) => {
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
        },
      },
      { label: 'Created', cell: (ep) => time(ep.createdAt) },
      { label: 'Actions', cell: actions },
    ],
  });

  const showSecret = (/** @type {unknown} */ secret, /** @type {string} */ title) => {
    const panel = secretPanel(str(secret), title, () => heading.focus());
    secretSlot.replaceChildren(panel);
    panel.focus();
    announce('Signing secret shown. Copy it now: it is shown only once.');
  };

  /** @param {Json} ep @param {boolean} enable @param {Event} event */
  const setEnabled = async (ep, enable, event) => {
    const id = str(ep.id) ?? '';
    const button = event.currentTarget instanceof HTMLButtonElement ? event.currentTarget : null;
    if (button) button.disabled = true;
    try {
      const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        body: { status: enable ? 'active' : 'disabled' },
      });
      const updated = obj(data) ?? { ...ep, status: enable ? 'active' : 'disabled' };
      list.replace(id, updated);
      announce(`Endpoint ${enable ? 'enabled' : 'disabled'}.`);
      const row = main.querySelector(`tr[data-id="${CSS.escape(id)}"]`);
      const again = row?.querySelector(`button[aria-label^="${enable ? 'Disable' : 'Enable'}"]`);
      if (again instanceof HTMLElement) again.focus();
    } catch (error) {
      if (button) button.disabled = false;
      formSlot.replaceChildren(errorBox(error));
    }
  };

  /** @param {Json} ep */
  const rotate = async (ep) => {
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
        list.replace(id, body);
        announce('New key pair created. Receivers verify with the public key shown in the list.');
      } else showSecret(body.secret, `New signing secret for ${str(body.url) ?? str(ep.url) ?? id}`);
    } catch (error) {
      formSlot.replaceChildren(errorBox(error));
    }
  };

  /** @param {Json} ep */
  const remove = async (ep) => {
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
      list.replace(id, null);
      announce('Endpoint deleted.');
      heading.focus();
    } catch (error) {
      formSlot.replaceChildren(errorBox(error));
    }
  };

  /**
   * The form to add an endpoint, or with `existing` to edit one (PATCH of the changed fields).
   * @param {Json} [existing]
   */
  const endpointForm = (existing) => {
    const editing = existing !== undefined;
    const existingTypes = Array.isArray(existing?.eventTypes)
      ? existing.eventTypes.flatMap((t) => str(t) ?? [])
      : [];
    const errorSlot = h('div', {});
    const url = h('input', {
      id: 'ep-url',
      name: 'url',
      type: 'url',
      required: true,
      placeholder: 'https://example.com/webhooks',
      class: 'mono',
      autocomplete: 'off',
      value: str(existing?.url),
    });
    const description = h('input', {
      id: 'ep-description',
      name: 'description',
      type: 'text',
      maxlength: '500',
      autocomplete: 'off',
      value: str(existing?.description),
    });
    // The scheme is chosen once, at creation (CONTRACT section 10): v1 HMAC or v1a ed25519.
    const scheme = h(
      'select',
      { id: 'ep-scheme', name: 'signatureScheme', 'aria-describedby': 'ep-scheme-hint' },
      h('option', { value: 'v1' }, 'v1: HMAC-SHA256, receivers hold the secret'),
      h('option', { value: 'v1a' }, 'v1a: ed25519, receivers hold only a public key'),
    );
    const existingFilter = obj(existing?.filter);
    const filterText = existingFilter === undefined ? '' : JSON.stringify(existingFilter, null, 2);
    // A JSON textarea: the server checks it (400 validation_failed naming the place), shown below.
    const filter = h('textarea', {
      id: 'ep-filter',
      name: 'filter',
      rows: '4',
      class: 'mono',
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: '{ "data.object.total": { "$gte": 10000 } }',
      'aria-describedby': 'ep-filter-hint',
    });
    if (filter instanceof HTMLTextAreaElement) filter.value = filterText;
    // CONTRACT section 11 "Ordered delivery": opt-in per endpoint, changeable at any time.
    const existingOrdering = str(existing?.ordering) === 'per-resource' ? 'per-resource' : 'none';
    const ordering = h(
      'select',
      { id: 'ep-ordering', name: 'ordering', 'aria-describedby': 'ep-ordering-hint' },
      h(
        'option',
        { value: 'none', selected: existingOrdering === 'none' },
        'None: deliveries go side by side',
      ),
      h(
        'option',
        { value: 'per-resource', selected: existingOrdering === 'per-resource' },
        'Per resource: one at a time per resource, in event order',
      ),
    );
    const boxes = KNOWN_EVENT_TYPES.map((type) =>
      h(
        'label',
        { class: 'check' },
        h('input', {
          type: 'checkbox',
          name: 'eventTypes',
          value: type,
          checked: existingTypes.includes(type),
        }),
        ' ',
        h('span', { class: 'mono' }, type),
      ),
    );
    const submit = h(
      'button',
      { type: 'submit', class: 'button' },
      editing ? 'Save changes' : 'Create endpoint',
    );
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'endpoint-form-heading', novalidate: true },
      h(
        'h2',
        { id: 'endpoint-form-heading' },
        editing ? `Edit endpoint ${str(existing?.id) ?? ''}` : 'Add an endpoint',
      ),
      h('div', { class: 'field' }, h('label', { for: 'ep-url' }, 'Endpoint URL'), url),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'ep-description' }, 'Description ', h('span', { class: 'muted' }, '(optional)')),
        description,
      ),
      editing
        ? null
        : h(
            'div',
            { class: 'field' },
            h('label', { for: 'ep-scheme' }, 'Signature scheme'),
            h('p', { class: 'hint', id: 'ep-scheme-hint' }, 'Fixed for the life of the endpoint.'),
            scheme,
          ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'ep-ordering' }, 'Ordering'),
        h(
          'p',
          { class: 'hint', id: 'ep-ordering-hint' },
          'Per resource: the next delivery about a resource waits until the one before it succeeded or went dead; other resources are not held back. A change applies to deliveries created from then on.',
        ),
        ordering,
      ),
      h(
        'fieldset',
        { class: 'field' },
        h('legend', {}, 'Event types'),
        h('p', { class: 'hint', id: 'ep-types-hint' }, 'Choose none to receive every event type.'),
        h('div', { class: 'checks' }, boxes),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'ep-filter' }, 'Filter ', h('span', { class: 'muted' }, '(optional, JSON)')),
        h(
          'p',
          { class: 'hint', id: 'ep-filter-hint' },
          'Only events matching it are delivered: a dotted path and a value, or an operator ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists); combine with $and, $or, $not. Leave empty for every event.',
        ),
        filter,
      ),
      errorSlot,
      h(
        'div',
        { class: 'actions' },
        submit,
        h(
          'button',
          {
            type: 'button',
            class: 'button secondary',
            onclick: () => {
              formSlot.replaceChildren();
              heading.focus();
            },
          },
          'Cancel',
        ),
      ),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      errorSlot.replaceChildren();
      if (url.value.trim() === '') {
        errorSlot.append(errorBox(new ApiError({ title: 'Enter the endpoint URL', status: 0 })));
        url.focus();
        return;
      }
      const unique = boxes.flatMap((label) => {
        const box = label.querySelector('input');
        return box?.checked ? [box.value] : [];
      });
      /** @type {Record<string, unknown>} */
      const body = {};
      if (!editing || url.value.trim() !== str(existing.url)) body.url = url.value.trim();
      const text = description.value.trim();
      // Clearing the description of an existing endpoint sends null (no description), not "".
      if (editing && text !== (str(existing.description) ?? '')) body.description = text === '' ? null : text;
      if (!editing && text !== '') body.description = text;
      if (!editing && scheme instanceof HTMLSelectElement && scheme.value === 'v1a')
        body.signatureScheme = 'v1a';
      if (ordering instanceof HTMLSelectElement && ordering.value !== existingOrdering)
        body.ordering = ordering.value;
      // No event types means every event type; on an edit, an empty list says so explicitly.
      if (editing ? unique.join(',') !== existingTypes.join(',') : unique.length > 0)
        body.eventTypes = unique;
      const filterValue = filter instanceof HTMLTextAreaElement ? filter.value.trim() : '';
      if (filterValue === '') {
        if (editing && existingFilter !== undefined) body.filter = null;
      } else {
        /** @type {unknown} */
        let parsed;
        try {
          parsed = JSON.parse(filterValue);
        } catch (error) {
          const reason = error instanceof Error ? error.message : 'not JSON';
          errorSlot.append(
            errorBox(new ApiError({ title: 'The filter is not valid JSON', detail: reason, status: 0 })),
          );
          filter.setAttribute('aria-invalid', 'true');
          filter.focus();
          return;
        }
        if (!editing || JSON.stringify(parsed) !== JSON.stringify(existingFilter)) body.filter = parsed;
      }
      submit.disabled = true;
      try {
        if (editing) {
          const id = str(existing.id) ?? '';
          const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}`, {
            method: 'PATCH',
            body,
          });
          formSlot.replaceChildren();
          list.replace(id, obj(data) ?? { ...existing, ...body });
          announce('Endpoint saved.');
          const again = main.querySelector(`tr[data-id="${CSS.escape(id)}"] button[aria-label^="Edit"]`);
          if (again instanceof HTMLElement) again.focus();
          return;
        }
        const { data } = await api('/webhook-endpoints', { method: 'POST', body });
        const created = obj(data) ?? {};
        formSlot.replaceChildren();
        if (str(created.secret) === undefined) {
          announce('Endpoint created. Receivers verify with the public key shown in the list.');
        } else showSecret(created.secret, `Signing secret for ${str(created.url) ?? url.value.trim()}`);
        void list.reload();
      } catch (error) {
        submit.disabled = false;
        errorSlot.append(errorBox(error));
        const fields = error instanceof ApiError ? error.errors.map((e) => e.field) : [];
        url.setAttribute('aria-invalid', String(fields.includes('url')));
        description.setAttribute('aria-invalid', String(fields.includes('description')));
        const filterFault = fields.some((f) => f === 'filter' || String(f).startsWith('filter.'));
        filter.setAttribute('aria-invalid', String(filterFault));
        const first = fields[0];
        (first === 'url'
          ? url
          : first === 'description'
            ? description
            : filterFault
              ? filter
              : submit
        ).focus();
      }
    });
    return form;
  };

  const add = h(
    'button',
    {
      type: 'button',
      class: 'button',
      onclick: () => {
        const form = endpointForm();
        formSlot.replaceChildren(form);
        form.querySelector('input')?.focus();
      },
    },
    'Add endpoint',
  );
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
        refreshButton(() => void list.reload()),
      ),
    ),
    sourceAddressesLine(),
    secretSlot,
    formSlot,
    list.element,
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
