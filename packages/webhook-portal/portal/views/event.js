// @ts-check
/**
 * One event (`GET /v1/events/{id}`): its facts and its payload, pretty-printed as text.
 *
 * @typedef {import('../values.js').Json} Json
 */

import { api } from '../api.js';
import { errorBox, pageHeading, refreshButton } from '../components.js';
import { byId, h } from '../dom.js';
import { code, dash, jsonBlock, obj, str, time } from '../values.js';

/** A link to an event's page, its id as the text. @param {string} id */
export function eventLink(id) {
  return h('a', { href: `#/events/${encodeURIComponent(id)}`, class: 'mono' }, id);
}

/** @param {string} id */
export function eventView(id) {
  const main = byId('main');
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const load = async () => {
    try {
      const { data } = await api(`/events/${encodeURIComponent(id)}`);
      const e = obj(data) ?? {};
      body.replaceChildren(
        h(
          'dl',
          { class: 'facts' },
          fact('Type', code(e.type)),
          fact('Sequence', str(e.sequence) ?? dash()),
          fact('Created', time(e.createdAt)),
          fact('Mode', typeof e.livemode === 'boolean' ? (e.livemode ? 'live' : 'test') : dash()),
        ),
        h('h2', {}, 'Payload'),
        jsonBlock(data, `Payload of event ${id}`),
      );
    } catch (error) {
      body.replaceChildren(errorBox(error, { retry: () => void load() }));
    }
  };
  main.replaceChildren(
    h(
      'p',
      { class: 'breadcrumb' },
      h('a', { href: '#/events' }, 'Events'),
      ' / ',
      h('span', { class: 'mono' }, id),
    ),
    pageHeading('Event', [refreshButton(() => void load())]),
    body,
  );
  main.querySelector('h1')?.focus();
  void load();
}

/** @param {string} term @param {import('../dom.js').Child} value */
function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}
