// @ts-check
/**
 * The Holdfast dashboard: one module, no framework, no third-party code.
 *
 * Rules this file keeps:
 * - It calls the public JSON API only (`/v1/...` with `Authorization: Bearer <key>`).
 * - The API key lives in sessionStorage for this tab only: never in a URL, a cookie, localStorage
 *   or a log line.
 * - Every string from the API reaches the page through `textContent` or an attribute, never as
 *   markup (the page's CSP also enforces Trusted Types, so `innerHTML` with a string throws).
 */

const KEY_STORAGE = 'holdfast.dashboard.apiKey';
const API_BASE = '/v1';
const PAGE_SIZE = 20;
const DELIVERY_STATUSES = ['pending', 'failed', 'succeeded', 'dead'];
/** Every event type the server emits: src/event-types.ts, which a test keeps this list equal to. */
const KNOWN_EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.cancelled',
  'order.deleted',
  'order.refunded',
  'payment.succeeded',
  'payment.failed',
  'subscription.created',
  'subscription.updated',
];
const NOTIFICATION_REFRESH_MS = 30_000;
const DELIVERY_POLL_MS = 2_000;

/**
 * @typedef {{ [key: string]: unknown }} Json
 * @typedef {{ data: Json[], pageInfo: { nextCursor: string | null, hasMore: boolean } }} Page
 * @typedef {{ field?: string, code?: string, detail?: string, pointer?: string }} FieldError
 * @typedef {{ path: string, params: URLSearchParams }} Route
 * @typedef {Node | string | null | undefined | false} Child
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => void)} AttrValue
 */

// ---------------------------------------------------------------------------------------------
// DOM

/**
 * Creates an element. Keys starting with `on` add listeners; `true` sets a boolean attribute;
 * `false`, `null` and `undefined` leave the attribute out. Children are nodes or text.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, AttrValue>} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} parent
 * @param {(Child | Child[])[]} children
 */
function append(parent, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`The page shell lacks #${id}.`);
  return el;
}

/** @param {string} message */
function announce(message) {
  const announcer = byId('announcer');
  // Clearing first makes screen readers repeat an identical message.
  announcer.textContent = '';
  window.setTimeout(() => {
    announcer.textContent = message;
  }, 50);
}

// ---------------------------------------------------------------------------------------------
// Values from the API, read defensively: a missing field renders as a dash, never as "undefined".

/**
 * @param {unknown} value
 * @returns {string | undefined}
 */
function str(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * @param {unknown} value
 * @returns {Json | undefined}
 */
function obj(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? /** @type {Json} */ (value)
    : undefined;
}

/**
 * An id given either as a string or as an expanded object with an `id`.
 * @param {unknown} value
 */
function refId(value) {
  return str(value) ?? str(obj(value)?.id);
}

/** @param {unknown} iso */
function time(iso) {
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

function dash() {
  return h('span', { class: 'muted', 'aria-label': 'none' }, '—');
}

/** @param {unknown} status */
function statusBadge(status) {
  const text = str(status) ?? 'unknown';
  return h('span', { class: `badge badge-${text.replace(/[^a-z_]/g, '')}` }, text);
}

/** @param {unknown} value */
function code(value) {
  const text = str(value);
  return text === undefined ? dash() : h('code', {}, text);
}

// ---------------------------------------------------------------------------------------------
// API client

class ApiError extends Error {
  /**
   * @param {{ title: string, detail?: string | undefined, status: number, code?: string | undefined,
   *   requestId?: string | undefined, errors?: FieldError[], retryAfter?: string | undefined }} info
   */
  constructor(info) {
    super(info.detail ?? info.title);
    this.name = 'ApiError';
    this.title = info.title;
    this.detail = info.detail;
    this.status = info.status;
    this.code = info.code;
    this.requestId = info.requestId;
    this.errors = info.errors ?? [];
    this.retryAfter = info.retryAfter;
  }
}

function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/**
 * Calls the public API. Problem documents (RFC 9457) become an `ApiError` that keeps the request id.
 *
 * @param {string} path under `/v1`
 * @param {{ method?: string, query?: Record<string, string | undefined>, body?: unknown, key?: string }} [options]
 * @returns {Promise<{ status: number, data: unknown, requestId: string | undefined }>}
 */
async function api(path, options = {}) {
  const key = options.key ?? apiKey();
  if (key === null)
    throw new ApiError({ title: 'Signed out', detail: 'Sign in with an API key.', status: 401 });
  const url = new URL(API_BASE + path, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json, application/problem+json', Authorization: `Bearer ${key}` };
  /** @type {RequestInit} */
  const init = {
    method: options.method ?? 'GET',
    headers,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  /** @type {Response} */
  let res;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError({
      title: 'The server could not be reached',
      detail: 'Check that the Holdfast server is running and your connection works, then try again.',
      status: 0,
    });
  }
  const requestId = res.headers.get('Request-Id') ?? undefined;
  const text = res.status === 204 ? '' : await res.text();
  /** @type {unknown} */
  let body = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!res.ok) {
    const problem = obj(body) ?? {};
    const errors = Array.isArray(problem.errors)
      ? problem.errors.flatMap((e) => {
          const entry = obj(e);
          return entry === undefined
            ? []
            : [
                /** @type {FieldError} */ ({
                  field: str(entry.field),
                  code: str(entry.code),
                  detail: str(entry.detail),
                  pointer: str(entry.pointer),
                }),
              ];
        })
      : [];
    const error = new ApiError({
      title: str(problem.title) ?? `Request failed (HTTP ${res.status})`,
      detail: str(problem.detail),
      status: res.status,
      code: str(problem.code),
      requestId: str(problem.requestId) ?? requestId,
      errors,
      retryAfter: res.headers.get('Retry-After') ?? undefined,
    });
    if (res.status === 401 && options.key === undefined) signOut(error);
    throw error;
  }
  return { status: res.status, data: body, requestId };
}

/**
 * @param {unknown} body
 * @returns {Page}
 */
function asPage(body) {
  const envelope = obj(body);
  /** @type {Json[]} */
  const data = [];
  if (Array.isArray(envelope?.data)) {
    for (const row of envelope.data) {
      const item = obj(row);
      if (item !== undefined) data.push(item);
    }
  }
  const info = obj(envelope?.pageInfo);
  const nextCursor = str(info?.nextCursor) ?? null;
  return { data, pageInfo: { nextCursor, hasMore: info?.hasMore === true && nextCursor !== null } };
}

/**
 * A readable box for any failure: title, detail, field errors and the request id to quote to support.
 *
 * @param {unknown} error
 * @param {{ retry?: () => void }} [options]
 */
function errorBox(error, options = {}) {
  const e =
    error instanceof ApiError
      ? error
      : new ApiError({
          title: 'Something went wrong',
          detail: 'The dashboard hit an unexpected error.',
          status: 0,
        });
  const heading = e.status > 0 ? `${e.title} (HTTP ${e.status})` : e.title;
  // A detail that already reads "url: an absolute URL" needs no second line saying the same.
  const fieldErrors = e.errors.filter(
    (f) =>
      !(
        e.detail !== undefined &&
        f.detail !== undefined &&
        e.detail.includes(f.detail) &&
        e.detail.includes(f.field ?? '')
      ),
  );
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('p', { class: 'error-title' }, heading),
    e.detail !== undefined && e.detail !== e.title ? h('p', {}, e.detail) : null,
    fieldErrors.length > 0
      ? h(
          'ul',
          { class: 'error-fields' },
          fieldErrors.map((f) =>
            h(
              'li',
              {},
              f.field !== undefined ? h('code', {}, f.field) : null,
              f.field !== undefined ? ': ' : '',
              f.detail ?? f.code ?? '',
            ),
          ),
        )
      : null,
    e.retryAfter !== undefined ? h('p', {}, `Try again in ${e.retryAfter} s.`) : null,
    e.requestId !== undefined
      ? h(
          'p',
          { class: 'request-id' },
          'Request ID: ',
          h('code', {}, e.requestId),
          ' ',
          copyButton(e.requestId, 'Copy request ID'),
        )
      : null,
    options.retry !== undefined
      ? h('button', { type: 'button', class: 'button secondary', onclick: options.retry }, 'Try again')
      : null,
  );
}

// ---------------------------------------------------------------------------------------------
// Small components

/**
 * @param {string} value
 * @param {string} label accessible name of the button
 */
function copyButton(value, label) {
  const button = h(
    'button',
    { type: 'button', class: 'button secondary small', 'aria-label': label },
    'Copy',
  );
  button.addEventListener('click', async () => {
    const ok = await copyText(value);
    button.textContent = ok ? 'Copied' : 'Copy failed';
    announce(ok ? 'Copied to the clipboard.' : 'Could not copy. Select the text and copy it by hand.');
    window.setTimeout(() => {
      button.textContent = 'Copy';
    }, 2000);
  });
  return button;
}

/** @param {string} value */
async function copyText(value) {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A modal confirmation built on `<dialog>`, which traps focus and closes on Escape natively.
 *
 * @param {{ title: string, body: string, confirm: string, danger?: boolean }} options
 * @returns {Promise<boolean>}
 */
function confirmDialog(options) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = `dialog-title-${Math.random().toString(36).slice(2)}`;
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: titleId }, options.title),
        h('p', {}, options.body),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            { type: 'submit', value: 'cancel', class: 'button secondary', autofocus: true },
            'Cancel',
          ),
          h(
            'button',
            { type: 'submit', value: 'confirm', class: options.danger ? 'button danger' : 'button' },
            options.confirm,
          ),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === 'confirm');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * @typedef {{ label: string, cell: (row: Json) => Child | Child[], className?: string }} Column
 */

/**
 * A table over a cursor-paginated list: fetches the first page, then "Load more" appends the next
 * one with `cursor=<pageInfo.nextCursor>` and the same filters (a cursor is bound to them).
 *
 * @param {{ path: string, query?: Record<string, string | undefined>, columns: Column[], caption: string,
 *   empty: string, rowKey?: (row: Json) => string | undefined }} options
 */
function pagedTable(options) {
  const { columns } = options;
  const tbody = h('tbody', {});
  const table = h(
    'table',
    { class: 'data', role: 'table' },
    h('caption', { class: 'visually-hidden' }, options.caption),
    h(
      'thead',
      {},
      h(
        'tr',
        { role: 'row' },
        columns.map((c) => h('th', { scope: 'col', role: 'columnheader' }, c.label)),
      ),
    ),
    tbody,
  );
  const status = h('p', { class: 'list-status muted' });
  const errorSlot = h('div', {});
  const more = h('button', { type: 'button', class: 'button secondary', hidden: true }, 'Load more');
  const element = h(
    'div',
    { class: 'table-wrap' },
    errorSlot,
    table,
    h('div', { class: 'list-footer' }, status, more),
  );
  /** @type {string | null} */
  let cursor = null;
  let count = 0;
  let generation = 0;

  /** @param {Json} row */
  const renderRow = (row) => {
    const tr = h(
      'tr',
      { role: 'row', 'data-id': options.rowKey?.(row) ?? str(row.id) },
      columns.map((c) =>
        h(
          'td',
          { role: 'cell', 'data-label': c.label, class: c.className },
          h('div', { class: 'cell' }, c.cell(row)),
        ),
      ),
    );
    return tr;
  };

  /** @param {boolean} reset */
  const load = async (reset) => {
    const mine = reset ? ++generation : generation;
    if (reset) {
      cursor = null;
      count = 0;
    }
    more.disabled = true;
    status.textContent = 'Loading…';
    errorSlot.replaceChildren();
    try {
      const { data } = await api(options.path, {
        query: { ...options.query, limit: String(PAGE_SIZE), ...(cursor === null ? {} : { cursor }) },
      });
      if (mine !== generation) return;
      const page = asPage(data);
      if (reset) tbody.replaceChildren();
      for (const row of page.data) tbody.append(renderRow(row));
      count += page.data.length;
      cursor = page.pageInfo.nextCursor;
      more.hidden = !page.pageInfo.hasMore;
      status.textContent =
        count === 0 ? options.empty : `Showing ${count}${page.pageInfo.hasMore ? ', more available' : ''}.`;
      table.hidden = count === 0;
      if (!reset) announce(`Loaded ${page.data.length} more. Showing ${count}.`);
    } catch (error) {
      if (mine !== generation) return;
      status.textContent = '';
      errorSlot.replaceChildren(errorBox(error, { retry: () => void load(reset) }));
    } finally {
      if (mine === generation) more.disabled = false;
    }
  };
  more.addEventListener('click', () => void load(false));
  table.hidden = true;
  void load(true);

  return {
    element,
    reload: () => load(true),
    /**
     * @param {string} id
     * @param {Json | null} row the new row, or null to remove it
     */
    replace(id, row) {
      for (const tr of tbody.querySelectorAll('tr')) {
        if (tr.dataset.id !== id) continue;
        if (row === null) {
          tr.remove();
          count -= 1;
          status.textContent = count === 0 ? options.empty : `Showing ${count}.`;
          table.hidden = count === 0;
        } else {
          tr.replaceWith(renderRow(row));
        }
      }
    },
  };
}

/**
 * @param {string} title
 * @param {Child[]} [actions]
 */
function pageHeading(title, actions = []) {
  document.title = `${title} · Holdfast dashboard`;
  return h(
    'div',
    { class: 'page-heading' },
    h('h1', { tabindex: '-1' }, title),
    h('div', { class: 'actions' }, actions),
  );
}

// ---------------------------------------------------------------------------------------------
// Sign in and out

/** @param {ApiError} [reason] */
function signOut(reason) {
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage may be unavailable; nothing was stored then.
  }
  stopPolling();
  notificationsCheckedAt = 0;
  dismissedNotifications.clear();
  byId('banners').replaceChildren();
  byId('banners').hidden = true;
  if (window.location.hash !== '' && window.location.hash !== '#/') {
    history.replaceState(null, '', window.location.pathname);
  }
  renderSignIn(reason);
}

/** @param {ApiError} [reason] */
function renderSignIn(reason) {
  setChrome(false);
  document.title = 'Sign in · Holdfast dashboard';
  const errorSlot = h('div', {});
  if (reason !== undefined && reason.status === 401) {
    errorSlot.append(
      errorBox(
        new ApiError({
          title: 'Signed out',
          detail: 'The API key was not accepted any more. Sign in again.',
          status: 401,
          requestId: reason.requestId,
        }),
      ),
    );
  }
  const input = h('input', {
    id: 'api-key',
    name: 'api-key',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'off',
    'aria-describedby': 'api-key-hint',
  });
  const submit = h('button', { type: 'submit', class: 'button' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', novalidate: true },
    h('h1', { tabindex: '-1' }, 'Sign in'),
    h('p', {}, 'Use an API key of your Holdfast account. It needs the webhooks scopes to change endpoints.'),
    h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
    h(
      'p',
      { id: 'api-key-hint', class: 'hint' },
      'Starts with hf_live_ or hf_test_. It is kept in this tab only (session storage) and sent in the Authorization header, never in a URL.',
    ),
    errorSlot,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    errorSlot.replaceChildren();
    if (key === '') {
      errorSlot.append(errorBox(new ApiError({ title: 'Enter an API key', status: 0 })));
      input.focus();
      return;
    }
    submit.disabled = true;
    try {
      await api('/webhook-endpoints', { query: { limit: '1' }, key });
    } catch (error) {
      // 403 means the key is valid but lacks the webhooks scopes: signing in is still useful.
      if (!(error instanceof ApiError && error.status === 403)) {
        submit.disabled = false;
        errorSlot.append(errorBox(error));
        input.focus();
        return;
      }
    }
    try {
      sessionStorage.setItem(KEY_STORAGE, key);
    } catch {
      submit.disabled = false;
      errorSlot.append(
        errorBox(
          new ApiError({
            title: 'Session storage is unavailable',
            detail: 'Allow site data for this page.',
            status: 0,
          }),
        ),
      );
      return;
    }
    input.value = '';
    if (window.location.hash === '' || window.location.hash === '#/') window.location.hash = '#/endpoints';
    else void route();
  });
  byId('main').replaceChildren(form);
  input.focus();
}

/** @param {boolean} signedIn */
function setChrome(signedIn) {
  byId('nav').hidden = !signedIn;
  byId('session').hidden = !signedIn;
  const key = signedIn ? apiKey() : null;
  const mode = byId('mode');
  mode.textContent = key?.startsWith('hf_test_')
    ? 'Test mode'
    : key?.startsWith('hf_live_')
      ? 'Live mode'
      : '';
  mode.hidden = mode.textContent === '';
}

// ---------------------------------------------------------------------------------------------
// Notifications banner

let notificationsCheckedAt = 0;
/** @type {Set<string>} */
const dismissedNotifications = new Set();

/**
 * A notification warns about disabling when its type or text says so (the contract names "an
 * endpoint about to be disabled" as the example of what an account is told).
 * @param {Json} n
 */
function isDisableWarning(n) {
  const words = [str(n.type), str(n.code), str(n.kind), str(n.title), str(n.message)].join(' ').toLowerCase();
  return /disabl/.test(words);
}

/** @param {Json} n */
function notificationText(n) {
  return str(n.message) ?? str(n.detail) ?? str(n.title) ?? str(n.type) ?? 'Notification';
}

/** @param {Json} n */
function notificationEndpoint(n) {
  const data = obj(n.data);
  return (
    refId(n.endpoint) ??
    refId(n.webhookEndpoint) ??
    refId(data?.endpoint) ??
    refId(data?.webhookEndpoint) ??
    refId(obj(data?.object)?.id)
  );
}

/** @param {Json} n */
function notificationDeadline(n) {
  const data = obj(n.data);
  return str(n.disableAt) ?? str(n.disablesAt) ?? str(data?.disableAt) ?? str(data?.disablesAt);
}

async function refreshBanners(force = false) {
  if (!force && Date.now() - notificationsCheckedAt < NOTIFICATION_REFRESH_MS) return;
  notificationsCheckedAt = Date.now();
  const region = byId('banners');
  try {
    const { data } = await api('/notifications', { query: { limit: String(PAGE_SIZE) } });
    const warnings = asPage(data).data.filter(
      (n) => isDisableWarning(n) && !dismissedNotifications.has(str(n.id) ?? ''),
    );
    region.replaceChildren(
      ...warnings.map((n) => {
        const id = str(n.id) ?? '';
        const endpoint = notificationEndpoint(n);
        const deadline = notificationDeadline(n);
        const banner = h(
          'div',
          { class: 'banner warning' },
          h('p', {}, h('strong', {}, 'Endpoint at risk: '), notificationText(n)),
          endpoint !== undefined
            ? h(
                'p',
                {},
                'Endpoint ',
                h('code', {}, endpoint),
                deadline !== undefined ? ' · disables at ' : '',
                deadline !== undefined ? time(deadline) : null,
              )
            : null,
          h(
            'div',
            { class: 'actions' },
            endpoint !== undefined
              ? h(
                  'a',
                  {
                    href: `#/deliveries?endpoint=${encodeURIComponent(endpoint)}`,
                    class: 'button secondary small',
                  },
                  'See its deliveries',
                )
              : null,
            h('a', { href: '#/notifications', class: 'button secondary small' }, 'All notifications'),
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary small',
                onclick: () => {
                  dismissedNotifications.add(id);
                  banner.remove();
                  region.hidden = region.childElementCount === 0;
                  announce('Alert dismissed for this session.');
                },
              },
              'Dismiss',
            ),
          ),
        );
        return banner;
      }),
    );
    region.hidden = warnings.length === 0;
  } catch {
    // The banner is a convenience; the notifications view shows the error itself.
  }
}

// ---------------------------------------------------------------------------------------------
// Views

/** @type {number | undefined} */
let pollTimer;
function stopPolling() {
  if (pollTimer !== undefined) window.clearTimeout(pollTimer);
  pollTimer = undefined;
}

/** @param {string | undefined} secret @param {string} heading @param {() => void} onDone */
function secretPanel(secret, heading, onDone) {
  if (secret === undefined) {
    return errorBox(
      new ApiError({
        title: 'No secret in the response',
        detail: 'The server did not return the signing secret.',
        status: 0,
      }),
    );
  }
  const panel = h(
    'section',
    { class: 'card secret-panel', 'aria-labelledby': 'secret-heading', tabindex: '-1' },
    h('h2', { id: 'secret-heading' }, heading),
    h(
      'p',
      {},
      h('strong', {}, 'Copy it now: it is shown only once.'),
      ' Receivers use it to verify the Webhook-Signature header.',
    ),
    h(
      'div',
      { class: 'field inline' },
      h('label', { for: 'signing-secret' }, 'Signing secret'),
      h('input', {
        id: 'signing-secret',
        type: 'text',
        readonly: true,
        value: secret,
        class: 'mono',
        spellcheck: 'false',
      }),
      copyButton(secret, 'Copy signing secret'),
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'button',
          onclick: () => {
            panel.remove();
            onDone();
          },
        },
        'I have saved it',
      ),
    ),
  );
  return panel;
}

/** @param {Route} _route */
function endpointsView(_route) {
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
    columns: [
      {
        label: 'URL',
        className: 'wrap',
        cell: (ep) => [
          h('span', { class: 'mono' }, str(ep.url) ?? '—'),
          h('br'),
          h('small', { class: 'muted' }, str(ep.id) ?? ''),
        ],
      },
      { label: 'Description', cell: (ep) => str(ep.description) || dash() },
      {
        label: 'Event types',
        cell: (ep) => {
          const types = Array.isArray(ep.eventTypes) ? ep.eventTypes.flatMap((t) => str(t) ?? []) : [];
          return types.length === 0
            ? h('span', { class: 'muted' }, 'All events')
            : h(
                'ul',
                { class: 'tags' },
                types.map((t) => h('li', {}, t)),
              );
        },
      },
      { label: 'Status', cell: (ep) => statusBadge(ep.status) },
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
      showSecret(body.secret, `New signing secret for ${str(body.url) ?? str(ep.url) ?? id}`);
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
      h(
        'fieldset',
        { class: 'field' },
        h('legend', {}, 'Event types'),
        h('p', { class: 'hint', id: 'ep-types-hint' }, 'Choose none to receive every event type.'),
        h('div', { class: 'checks' }, boxes),
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
      // No event types means every event type; on an edit, an empty list says so explicitly.
      if (editing ? unique.join(',') !== existingTypes.join(',') : unique.length > 0)
        body.eventTypes = unique;
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
        showSecret(created.secret, `Signing secret for ${str(created.url) ?? url.value.trim()}`);
        void list.reload();
      } catch (error) {
        submit.disabled = false;
        errorSlot.append(errorBox(error));
        const fields = error instanceof ApiError ? error.errors.map((e) => e.field) : [];
        url.setAttribute('aria-invalid', String(fields.includes('url')));
        description.setAttribute('aria-invalid', String(fields.includes('description')));
        const first = fields[0];
        (first === 'url' ? url : first === 'description' ? description : submit).focus();
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
    secretSlot,
    formSlot,
    list.element,
  );
  heading.focus();
}

/** @param {() => void} onClick */
function refreshButton(onClick) {
  return h('button', { type: 'button', class: 'button secondary', onclick: onClick }, 'Refresh');
}

/** @param {Json} d */
function deliveryEventType(d) {
  return str(d.eventType) ?? str(obj(d.event)?.type);
}

/** @param {Json} d */
function attemptCount(d) {
  return str(d.attemptCount) ?? str(d.attempts);
}

/**
 * The replay control: a button plus the place where a refused replay explains itself.
 * @param {Json} d
 * @param {(updated: Json) => void} onReplayed
 */
function replayButton(d, onReplayed) {
  const id = str(d.id) ?? '';
  const errorSlot = h('div', { class: 'replay-error' });
  const button = h(
    'button',
    { type: 'button', class: 'button small', 'aria-label': `Replay delivery ${id}` },
    'Replay',
  );
  button.addEventListener('click', async () => {
    button.disabled = true;
    errorSlot.replaceChildren();
    try {
      const { data } = await api(`/deliveries/${encodeURIComponent(id)}/replay`, { method: 'POST' });
      announce('Replay queued. The delivery will be sent again with the same Webhook-Id.');
      onReplayed(obj(data) ?? { ...d, status: 'pending' });
    } catch (error) {
      button.disabled = false;
      errorSlot.replaceChildren(errorBox(error));
    }
  });
  return h('div', { class: 'replay' }, button, errorSlot);
}

/**
 * Deliveries with filters; with `dead` fixed it is the dead-letter view (`GET /v1/deliveries?status=dead`).
 * @param {Route} route
 * @param {{ deadLetters: boolean }} mode
 */
function deliveriesView(route, mode) {
  const main = byId('main');
  const status = mode.deadLetters ? 'dead' : (route.params.get('status') ?? '');
  const endpoint = route.params.get('endpoint') ?? '';
  const eventType = route.params.get('eventType') ?? '';
  const title = mode.deadLetters ? 'Dead letters' : 'Deliveries';
  const base = mode.deadLetters ? '#/dead-letters' : '#/deliveries';

  const statusSelect = h(
    'select',
    { id: 'f-status', name: 'status', disabled: mode.deadLetters },
    h('option', { value: '' }, 'Any status'),
    DELIVERY_STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)),
  );
  const endpointSelect = h(
    'select',
    { id: 'f-endpoint', name: 'endpoint' },
    h('option', { value: '' }, 'Any endpoint'),
  );
  if (endpoint !== '') endpointSelect.append(h('option', { value: endpoint, selected: true }, endpoint));
  void api('/webhook-endpoints', { query: { limit: '100' } })
    .then(({ data }) => {
      for (const ep of asPage(data).data) {
        const id = str(ep.id);
        if (id === undefined || id === endpoint) continue;
        endpointSelect.append(h('option', { value: id }, `${str(ep.url) ?? id} (${id})`));
      }
      const current = endpointSelect.querySelector(`option[value="${CSS.escape(endpoint)}"]`);
      const ep = asPage(data).data.find((e) => str(e.id) === endpoint);
      if (current !== null && ep !== undefined)
        current.textContent = `${str(ep.url) ?? endpoint} (${endpoint})`;
    })
    .catch(() => {
      // The select still offers "Any endpoint" and the one in the URL.
    });
  const typeInput = h('input', {
    id: 'f-event-type',
    name: 'eventType',
    type: 'text',
    value: eventType,
    list: 'known-event-types',
    class: 'mono',
    autocomplete: 'off',
  });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': `Filter ${title.toLowerCase()}` },
    mode.deadLetters
      ? null
      : h('div', { class: 'field' }, h('label', { for: 'f-status' }, 'Status'), statusSelect),
    h('div', { class: 'field' }, h('label', { for: 'f-endpoint' }, 'Endpoint'), endpointSelect),
    h('div', { class: 'field' }, h('label', { for: 'f-event-type' }, 'Event type'), typeInput),
    h(
      'datalist',
      { id: 'known-event-types' },
      KNOWN_EVENT_TYPES.map((t) => h('option', { value: t })),
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'button' }, 'Apply filters'),
      h('a', { href: base, class: 'button secondary' }, 'Clear'),
    ),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    if (!mode.deadLetters && statusSelect.value !== '') params.set('status', statusSelect.value);
    if (endpointSelect.value !== '') params.set('endpoint', endpointSelect.value);
    if (typeInput.value.trim() !== '') params.set('eventType', typeInput.value.trim());
    const query = params.toString();
    window.location.hash = query === '' ? base : `${base}?${query}`;
  });

  /** @type {Column[]} */
  const columns = [
    {
      label: 'Delivery',
      cell: (d) => {
        const id = str(d.id) ?? '';
        return h('a', { href: `#/deliveries/${encodeURIComponent(id)}`, class: 'mono' }, id);
      },
    },
    { label: 'Event type', cell: (d) => code(deliveryEventType(d)) },
    { label: 'Endpoint', cell: (d) => code(refId(d.endpoint)) },
    { label: 'Status', cell: (d) => statusBadge(d.status) },
    { label: 'Attempts', cell: (d) => attemptCount(d) ?? dash() },
    { label: 'Created', cell: (d) => time(d.createdAt) },
  ];
  if (mode.deadLetters) {
    columns.push({
      label: 'Replay',
      cell: (d) =>
        replayButton(d, (updated) => {
          list.replace(str(d.id) ?? '', updated);
        }),
    });
  }
  const list = pagedTable({
    path: '/deliveries',
    query: {
      status: status || undefined,
      endpoint: endpoint || undefined,
      eventType: eventType || undefined,
    },
    caption: title,
    empty: mode.deadLetters
      ? 'No dead letters. Deliveries that run out of retries, or are refused for good, appear here.'
      : 'No deliveries match.',
    columns,
  });

  main.replaceChildren();
  append(main, [
    pageHeading(title, [refreshButton(() => void list.reload())]),
    mode.deadLetters
      ? h(
          'p',
          { class: 'lead' },
          'Deliveries that ran out of retries or were refused for good. Replay sends the same event again, with the same Webhook-Id.',
        )
      : null,
    filters,
    list.element,
  ]);
  main.querySelector('h1')?.focus();
}

/**
 * One delivery and its attempt log (`GET /v1/deliveries/{id}` and `/attempts`). While the delivery
 * is pending or retrying it is polled; the page changes only when the delivery does, and focus
 * stays where the user left it.
 * @param {string} id
 */
function deliveryView(id) {
  const main = byId('main');
  const summary = h('div', {});
  const poll = h('p', { class: 'muted' });
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
        pollTimer = window.setTimeout(() => void load(), DELIVERY_POLL_MS);
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
    const replay = replayButton(d, () => void load(true));
    replay.querySelector('button')?.setAttribute('data-focus-key', 'replay');
    summary.replaceChildren(
      h(
        'dl',
        { class: 'facts' },
        fact('Status', statusBadge(d.status)),
        fact('Event', code(refId(d.event) ?? str(d.eventId))),
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
    );
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

function eventsView() {
  const main = byId('main');
  const list = pagedTable({
    path: '/events',
    caption: 'Events',
    empty: 'No events yet. Creating or changing a resource emits one.',
    columns: [
      { label: 'Event', cell: (e) => code(e.id) },
      { label: 'Type', cell: (e) => code(e.type) },
      { label: 'Sequence', cell: (e) => str(e.sequence) ?? dash() },
      { label: 'Created', cell: (e) => time(e.createdAt) },
      {
        label: 'Payload',
        className: 'wrap',
        cell: (e) =>
          h(
            'details',
            {},
            h(
              'summary',
              {},
              `Show data`,
              h('span', { class: 'visually-hidden' }, ` of ${str(e.id) ?? 'event'}`),
            ),
            h('pre', { class: 'body-prefix' }, JSON.stringify(e.data ?? null, null, 2)),
          ),
      },
    ],
  });
  main.replaceChildren(pageHeading('Events', [refreshButton(() => void list.reload())]), list.element);
  main.querySelector('h1')?.focus();
}

function notificationsView() {
  const main = byId('main');
  const list = pagedTable({
    path: '/notifications',
    caption: 'Notifications',
    empty: 'No notifications. Warnings such as an endpoint about to be disabled appear here.',
    columns: [
      { label: 'Time', cell: (n) => time(n.createdAt) },
      {
        label: 'Type',
        cell: (n) =>
          isDisableWarning(n)
            ? h('span', { class: 'badge badge-failed' }, str(n.type) ?? 'warning')
            : code(n.type),
      },
      { label: 'Message', className: 'wrap', cell: (n) => notificationText(n) },
      {
        label: 'Endpoint',
        cell: (n) => {
          const ep = notificationEndpoint(n);
          return ep === undefined
            ? dash()
            : h('a', { href: `#/deliveries?endpoint=${encodeURIComponent(ep)}`, class: 'mono' }, ep);
        },
      },
    ],
  });
  main.replaceChildren(
    pageHeading('Notifications', [
      refreshButton(() => {
        void list.reload();
        void refreshBanners(true);
      }),
    ]),
    list.element,
  );
  main.querySelector('h1')?.focus();
}

function notFoundView() {
  byId('main').replaceChildren(
    pageHeading('Page not found'),
    h(
      'p',
      {},
      'This dashboard page does not exist. ',
      h('a', { href: '#/endpoints' }, 'Go to webhook endpoints'),
      '.',
    ),
  );
  byId('main').querySelector('h1')?.focus();
}

// ---------------------------------------------------------------------------------------------
// Routing: the hash holds the view and its filters, never the key.

/** @returns {Route} */
function currentRoute() {
  const raw = window.location.hash.replace(/^#/, '') || '/endpoints';
  const [path = '/endpoints', query = ''] = raw.split('?', 2);
  return { path, params: new URLSearchParams(query) };
}

async function route() {
  stopPolling();
  if (apiKey() === null) {
    renderSignIn();
    return;
  }
  setChrome(true);
  const r = currentRoute();
  const section = r.path.split('/')[1] || 'endpoints';
  for (const link of byId('nav').querySelectorAll('a')) {
    if (link.dataset.route === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const deliveryMatch = /^\/deliveries\/([^/]+)$/.exec(r.path);
  if (r.path === '/endpoints' || r.path === '/' || r.path === '') endpointsView(r);
  else if (r.path === '/deliveries') deliveriesView(r, { deadLetters: false });
  else if (r.path === '/dead-letters') deliveriesView(r, { deadLetters: true });
  else if (deliveryMatch?.[1] !== undefined) deliveryView(decodeURIComponent(deliveryMatch[1]));
  else if (r.path === '/events') eventsView();
  else if (r.path === '/notifications') notificationsView();
  else notFoundView();
  void refreshBanners();
}

byId('sign-out').addEventListener('click', () => {
  signOut();
  announce('Signed out. The API key was removed from this tab.');
});
window.addEventListener('hashchange', () => void route());
void route();
