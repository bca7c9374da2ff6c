// @ts-check
/**
 * What the deliveries list and the delivery page both show: the event type, the attempt count and
 * the replay control.
 *
 * @typedef {import('./values.js').Json} Json
 */

import { api } from './api.js';
import { errorBox } from './components.js';
import { announce, h } from './dom.js';
import { obj, str } from './values.js';

/** @param {Json} d */
export function deliveryEventType(d) {
  return str(d.eventType) ?? str(obj(d.event)?.type);
}

/** @param {Json} d */
export function attemptCount(d) {
  return str(d.attemptCount) ?? str(d.attempts);
}

/**
 * The replay control: a button plus the place where a refused replay explains itself.
 * @param {Json} d
 * @param {(updated: Json) => void} onReplayed
 */
export function replayButton(d, onReplayed) {
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
