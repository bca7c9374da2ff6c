// @ts-check
/** What an unknown hash route shows. */

import { pageHeading } from '../components.js';
import { byId, h } from '../dom.js';

export function notFoundView() {
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
