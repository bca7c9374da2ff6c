// @ts-check
/**
 * The Holdfast dashboard: ES modules served as static files, no framework, no third-party code,
 * no build step. This module routes; each view is a module under `views/`.
 *
 * Rules every module keeps:
 * - It calls the management API only (at the server's `holdfast-api-base`, with
 *   `Authorization: Bearer <key or session token>`), through `api.js`.
 * - The API key (or portal session token) lives in sessionStorage for this tab only: never in a URL, a cookie, localStorage
 *   or a log line.
 * - Every string from the API reaches the page through `textContent` or an attribute, never as
 *   markup (the page's CSP also enforces Trusted Types, so `innerHTML` with a string throws).
 *
 * @typedef {{ path: string, params: URLSearchParams }} Route
 */

import { apiKey, whenUnauthorized } from './api.js';
import { refreshBanners } from './banners.js';
import { announce, byId } from './dom.js';
import { loadEventTypes } from './event-types.js';
import { stopPolling } from './polling.js';
import { adoptSessionFromUrl, renderSignIn, setChrome, signOut, whenSignedIn } from './session.js';
import { deliveriesView } from './views/deliveries.js';
import { deliveryView } from './views/delivery.js';
import { endpointView } from './views/endpoint.js';
import { endpointsView } from './views/endpoints.js';
import { eventView } from './views/event.js';
import { eventsView } from './views/events.js';
import { notFoundView } from './views/not-found.js';
import { notificationsView } from './views/notifications.js';

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
  const endpointMatch = /^\/endpoints\/([^/]+)$/.exec(r.path);
  const eventMatch = /^\/events\/([^/]+)$/.exec(r.path);
  if (r.path === '/endpoints' || r.path === '/' || r.path === '') endpointsView(r);
  else if (r.path === '/deliveries') deliveriesView(r, { deadLetters: false });
  else if (r.path === '/dead-letters') deliveriesView(r, { deadLetters: true });
  else if (deliveryMatch?.[1] !== undefined) deliveryView(decodeURIComponent(deliveryMatch[1]));
  else if (endpointMatch?.[1] !== undefined) endpointView(decodeURIComponent(endpointMatch[1]), r.params);
  else if (r.path === '/events') eventsView();
  else if (eventMatch?.[1] !== undefined) eventView(decodeURIComponent(eventMatch[1]));
  else if (r.path === '/notifications') notificationsView();
  else notFoundView();
  void refreshBanners();
}

whenUnauthorized(signOut);
whenSignedIn(route);
byId('sign-out').addEventListener('click', () => {
  signOut();
  announce('Signed out. The API key was removed from this tab.');
});
window.addEventListener('hashchange', () => void route());
adoptSessionFromUrl();
void loadEventTypes().then(route);
