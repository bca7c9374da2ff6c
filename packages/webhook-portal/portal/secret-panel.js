// @ts-check
/** The signing secret, shown once after creating an endpoint or rotating its secret. */

import { ApiError } from './api.js';
import { copyButton, errorBox } from './components.js';
import { h } from './dom.js';

/** @param {string | undefined} secret @param {string} heading @param {() => void} onDone */
export function secretPanel(secret, heading, onDone) {
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
