// @ts-check
/**
 * Sign in and out: the API key, or the portal session token a host opened the page with, is kept
 * in this tab's sessionStorage only. A session token arrives in the URL's fragment (never sent to
 * a server) and is removed from the address bar at once.
 */

import { ApiError, api, apiKey, KEY_STORAGE, sessionClaims } from './api.js';
import { resetBanners } from './banners.js';
import { errorBox } from './components.js';
import { byId, h } from './dom.js';
import { stopPolling } from './polling.js';

/** @type {() => Promise<void>} */
let afterSignIn = async () => {};

/**
 * What runs once a key is accepted and the page should show the current route; set once at start.
 * @param {() => Promise<void>} render
 */
export function whenSignedIn(render) {
  afterSignIn = render;
}

const SESSION_FRAGMENT = '#session=';

/**
 * Takes a portal session token from the fragment (`#session=hfps_...`) into session storage and
 * replaces the address with the endpoints view, so the token leaves the history and the address bar.
 */
export function adoptSessionFromUrl() {
  const { hash, pathname, search } = window.location;
  if (!hash.startsWith(SESSION_FRAGMENT)) return;
  const token = decodeURIComponent(hash.slice(SESSION_FRAGMENT.length));
  history.replaceState(null, '', `${pathname}${search}#/endpoints`);
  if (!token.startsWith('hfps_')) return;
  try {
    sessionStorage.setItem(KEY_STORAGE, token);
  } catch {
    // Storage unavailable: the page shows the sign-in form instead.
  }
}

/**
 * The header's badge: the mode of the key or session, and whether the session is read-only.
 * @param {string | null} key
 */
function modeText(key) {
  if (key === null) return '';
  if (key.startsWith('hf_test_')) return 'Test mode';
  if (key.startsWith('hf_live_')) return 'Live mode';
  const claims = sessionClaims(key);
  if (claims === undefined) return '';
  return `${claims.livemode ? 'Live mode' : 'Test mode'}${claims.readOnly ? ' · read-only' : ''}`;
}

/** @param {ApiError} [reason] */
export function signOut(reason) {
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage may be unavailable; nothing was stored then.
  }
  stopPolling();
  resetBanners();
  if (window.location.hash !== '' && window.location.hash !== '#/') {
    history.replaceState(null, '', window.location.pathname);
  }
  renderSignIn(reason);
}

/** @param {ApiError} [reason] */
export function renderSignIn(reason) {
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
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void signIn(input, submit, errorSlot);
  });
  byId('main').replaceChildren(form);
  input.focus();
}

/**
 * Checks the typed key against the API, then keeps it for this tab and shows the current view.
 * @param {HTMLInputElement} input @param {HTMLButtonElement} submit @param {HTMLElement} errorSlot
 */
async function signIn(input, submit, errorSlot) {
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
  else void afterSignIn();
}

/** @param {boolean} signedIn */
export function setChrome(signedIn) {
  byId('nav').hidden = !signedIn;
  byId('session').hidden = !signedIn;
  const mode = byId('mode');
  mode.textContent = modeText(signedIn ? apiKey() : null);
  mode.hidden = mode.textContent === '';
}
