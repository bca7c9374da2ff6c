// @ts-check
/**
 * The form to add an endpoint, or to edit one (a PATCH of the changed fields only).
 *
 * @typedef {import('../values.js').Json} Json
 * @typedef {import('./endpoint-rows.js').EndpointsPage} EndpointsPage
 * @typedef {{ existing: Json | undefined, existingTypes: string[], existingOrdering: string,
 *   existingFilter: Json | undefined, url: HTMLInputElement, description: HTMLInputElement,
 *   scheme: HTMLSelectElement, ordering: HTMLSelectElement, filter: HTMLTextAreaElement,
 *   boxes: HTMLLabelElement[], errorSlot: HTMLDivElement, submit: HTMLButtonElement }} Fields
 */

import { ApiError, api } from '../api.js';
import { errorBox } from '../components.js';
import { announce, h } from '../dom.js';
import { KNOWN_EVENT_TYPES } from '../event-types.js';
import { obj, str } from '../values.js';
import { showSecret } from './endpoint-rows.js';

/**
 * @param {EndpointsPage} page
 * @param {Json} [existing] the endpoint to edit; absent to add one
 */
export function endpointForm(page, existing) {
  const fields = formFields(existing);
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'endpoint-form-heading', novalidate: true },
    formLayout(fields, () => {
      page.formSlot.replaceChildren();
      page.heading.focus();
    }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    fields.errorSlot.replaceChildren();
    const body = readBody(fields);
    if (body !== undefined) void send(page, fields, body);
  });
  return form;
}

/**
 * The inputs, filled from `existing`.
 * @param {Json | undefined} existing
 * @returns {Fields}
 */
function formFields(existing) {
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
  const scheme = schemeSelect();
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
  filter.value = filterText;
  const existingOrdering = str(existing?.ordering) === 'per-resource' ? 'per-resource' : 'none';
  const ordering = orderingSelect(existingOrdering);
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
    existing ? 'Save changes' : 'Create endpoint',
  );
  return {
    existing,
    existingTypes,
    existingOrdering,
    existingFilter,
    url,
    description,
    scheme,
    ordering,
    filter,
    boxes,
    errorSlot,
    submit,
  };
}

/** The signature scheme, chosen once at creation: v1 HMAC or v1a ed25519. */
function schemeSelect() {
  return h(
    'select',
    { id: 'ep-scheme', name: 'signatureScheme', 'aria-describedby': 'ep-scheme-hint' },
    h('option', { value: 'v1' }, 'v1: HMAC-SHA256, receivers hold the secret'),
    h('option', { value: 'v1a' }, 'v1a: ed25519, receivers hold only a public key'),
  );
}

/**
 * Ordered delivery: opt-in per endpoint, changeable at any time.
 * @param {string} current
 */
function orderingSelect(current) {
  return h(
    'select',
    { id: 'ep-ordering', name: 'ordering', 'aria-describedby': 'ep-ordering-hint' },
    h('option', { value: 'none', selected: current === 'none' }, 'None: deliveries go side by side'),
    h(
      'option',
      { value: 'per-resource', selected: current === 'per-resource' },
      'Per resource: one at a time per resource, in event order',
    ),
  );
}

/**
 * The form's fields in order, with their labels and hints.
 * @param {Fields} f
 * @param {() => void} cancel
 */
function formLayout(f, cancel) {
  const editing = f.existing !== undefined;
  return [
    h(
      'h2',
      { id: 'endpoint-form-heading' },
      editing ? `Edit endpoint ${str(f.existing?.id) ?? ''}` : 'Add an endpoint',
    ),
    h('div', { class: 'field' }, h('label', { for: 'ep-url' }, 'Endpoint URL'), f.url),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'ep-description' }, 'Description ', h('span', { class: 'muted' }, '(optional)')),
      f.description,
    ),
    editing
      ? null
      : h(
          'div',
          { class: 'field' },
          h('label', { for: 'ep-scheme' }, 'Signature scheme'),
          h('p', { class: 'hint', id: 'ep-scheme-hint' }, 'Fixed for the life of the endpoint.'),
          f.scheme,
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
      f.ordering,
    ),
    h(
      'fieldset',
      { class: 'field' },
      h('legend', {}, 'Event types'),
      h('p', { class: 'hint', id: 'ep-types-hint' }, 'Choose none to receive every event type.'),
      h('div', { class: 'checks' }, f.boxes),
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
      f.filter,
    ),
    f.errorSlot,
    h(
      'div',
      { class: 'actions' },
      f.submit,
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary',
          onclick: cancel,
        },
        'Cancel',
      ),
    ),
  ];
}

/**
 * The request body from the form: every field on a create, the changed ones on an edit; undefined
 * (with the error shown) when the form cannot be sent as it is.
 * @param {Fields} f
 * @returns {Record<string, unknown> | undefined}
 */
function readBody(f) {
  const { existing } = f;
  const editing = existing !== undefined;
  if (f.url.value.trim() === '') {
    f.errorSlot.append(errorBox(new ApiError({ title: 'Enter the endpoint URL', status: 0 })));
    f.url.focus();
    return undefined;
  }
  const unique = f.boxes.flatMap((label) => {
    const box = label.querySelector('input');
    return box?.checked ? [box.value] : [];
  });
  /** @type {Record<string, unknown>} */
  const body = {};
  if (!editing || f.url.value.trim() !== str(existing.url)) body.url = f.url.value.trim();
  const text = f.description.value.trim();
  // Clearing the description of an existing endpoint sends null (no description), not "".
  if (editing && text !== (str(existing.description) ?? '')) body.description = text === '' ? null : text;
  if (!editing && text !== '') body.description = text;
  if (!editing && f.scheme.value === 'v1a') body.signatureScheme = 'v1a';
  if (f.ordering.value !== f.existingOrdering) body.ordering = f.ordering.value;
  // No event types means every event type; on an edit, an empty list says so explicitly.
  if (editing ? unique.join(',') !== f.existingTypes.join(',') : unique.length > 0) body.eventTypes = unique;
  return readFilter(f, body);
}

/**
 * Adds the filter to `body` when it is new or changed; undefined when it is not JSON.
 * @param {Fields} f
 * @param {Record<string, unknown>} body
 */
function readFilter(f, body) {
  const editing = f.existing !== undefined;
  const filterValue = f.filter.value.trim();
  if (filterValue === '') {
    if (editing && f.existingFilter !== undefined) body.filter = null;
    return body;
  }
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(filterValue);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not JSON';
    f.errorSlot.append(
      errorBox(new ApiError({ title: 'The filter is not valid JSON', detail: reason, status: 0 })),
    );
    f.filter.setAttribute('aria-invalid', 'true');
    f.filter.focus();
    return undefined;
  }
  if (!editing || JSON.stringify(parsed) !== JSON.stringify(f.existingFilter)) body.filter = parsed;
  return body;
}

/**
 * Sends the form: a PATCH of an existing endpoint or a POST of a new one (its secret shown once).
 * @param {EndpointsPage} page
 * @param {Fields} f
 * @param {Record<string, unknown>} body
 */
async function send(page, f, body) {
  const { existing } = f;
  f.submit.disabled = true;
  try {
    if (existing !== undefined) {
      const id = str(existing.id) ?? '';
      const { data } = await api(`/webhook-endpoints/${encodeURIComponent(id)}`, { method: 'PATCH', body });
      page.formSlot.replaceChildren();
      page.list.replace(id, obj(data) ?? { ...existing, ...body });
      announce('Endpoint saved.');
      const again = page.main.querySelector(`tr[data-id="${CSS.escape(id)}"] button[aria-label^="Edit"]`);
      if (again instanceof HTMLElement) again.focus();
      return;
    }
    const { data } = await api('/webhook-endpoints', { method: 'POST', body });
    const created = obj(data) ?? {};
    page.formSlot.replaceChildren();
    if (str(created.secret) === undefined) {
      announce('Endpoint created. Receivers verify with the public key shown in the list.');
    } else showSecret(page, created.secret, `Signing secret for ${str(created.url) ?? f.url.value.trim()}`);
    void page.list.reload();
  } catch (error) {
    f.submit.disabled = false;
    f.errorSlot.append(errorBox(error));
    markFaults(f, error);
  }
}

/**
 * Marks the fields the server named as invalid and moves the focus to the first.
 * @param {Fields} f
 * @param {unknown} error
 */
function markFaults(f, error) {
  const fields = error instanceof ApiError ? error.errors.map((e) => e.field) : [];
  f.url.setAttribute('aria-invalid', String(fields.includes('url')));
  f.description.setAttribute('aria-invalid', String(fields.includes('description')));
  const filterFault = fields.some((field) => field === 'filter' || String(field).startsWith('filter.'));
  f.filter.setAttribute('aria-invalid', String(filterFault));
  const first = fields[0];
  (first === 'url'
    ? f.url
    : first === 'description'
      ? f.description
      : filterFault
        ? f.filter
        : f.submit
  ).focus();
}
