// @ts-check
/**
 * Small components every view uses: the error box, copy and refresh buttons, the confirmation
 * dialog and the page heading.
 *
 * @typedef {import('./dom.js').Child} Child
 */

import { ApiError } from './api.js';
import { announce, h } from './dom.js';

/**
 * A readable box for any failure: title, detail, field errors and the request id to quote to support.
 *
 * @param {unknown} error
 * @param {{ retry?: () => void }} [options]
 */
export function errorBox(error, options = {}) {
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

/**
 * @param {string} value
 * @param {string} label accessible name of the button
 */
export function copyButton(value, label) {
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
export async function copyText(value) {
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
export function confirmDialog(options) {
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

/** @param {() => void} onClick */
export function refreshButton(onClick) {
  return h('button', { type: 'button', class: 'button secondary', onclick: onClick }, 'Refresh');
}

/**
 * @param {string} title
 * @param {Child[]} [actions]
 */
export function pageHeading(title, actions = []) {
  document.title = `${title} · Holdfast dashboard`;
  return h(
    'div',
    { class: 'page-heading' },
    h('h1', { tabindex: '-1' }, title),
    h('div', { class: 'actions' }, actions),
  );
}
