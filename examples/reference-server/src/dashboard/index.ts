import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';

/**
 * The page is static files next to this module: the shell, a stylesheet and ES modules (`app.js`
 * and the modules it imports, views under `views/`), served as they are, with no build step. It
 * talks to the public `/v1` API only, with the key the user types, so the server gives it nothing
 * the API does not give any client.
 */
const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
// Module scripts must be served with a JavaScript MIME type, or the browser refuses to run them.
const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** Every module of the page, found once: only these paths are served, so no request names a file. */
function moduleNames(): string[] {
  return readdirSync(new URL('./', import.meta.url), { recursive: true, encoding: 'utf8' })
    .map((name) => name.replaceAll('\\', '/'))
    .filter((name) => name.endsWith('.js'))
    .sort();
}

interface Asset {
  body: string;
  etag: string;
}

/**
 * No inline script or style anywhere, so the policy needs no nonce or hash. Trusted Types make
 * any accidental `innerHTML` with a string throw instead of becoming an injection point.
 */
export const DASHBOARD_CSP: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '"': '&quot;',
  '<': '&lt;',
  '>': '&gt;',
  "'": '&#39;',
};

function escapeAttribute(value: string): string {
  return value.replace(/[&"<>']/g, (ch) => ATTRIBUTE_ESCAPES[ch] ?? ch);
}

function load(name: string): Promise<Asset> {
  return readFile(new URL(`./${name}`, import.meta.url), 'utf8').then((body) => ({
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }));
}

/**
 * Routes serving the Holdfast dashboard: the HTML shell at the mount point, plus `app.css` and
 * the page's ES modules (`app.js`, `views/*.js`, ...) beneath it. Mount it where the page should live; asset URLs follow the mount path.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { dashboardRoutes } from './dashboard';
 *
 * const app = new Hono();
 * app.route('/dashboard', dashboardRoutes());
 * ```
 */
export function dashboardRoutes(): Hono {
  const cache = new Map<string, Promise<Asset>>();
  const asset = (name: string): Promise<Asset> => {
    let pending = cache.get(name);
    if (pending === undefined) {
      pending = load(name);
      // A failed read is retried on the next request instead of being cached forever.
      pending.catch(() => cache.delete(name));
      cache.set(name, pending);
    }
    return pending;
  };

  const respond = (request: Request, file: Asset, contentType: string, cacheControl: string): Response => {
    const headers = new Headers(SECURITY_HEADERS);
    headers.set('Cache-Control', cacheControl);
    headers.set('ETag', file.etag);
    if (request.headers.get('If-None-Match') === file.etag)
      return new Response(null, { status: 304, headers });
    headers.set('Content-Type', contentType);
    return new Response(file.body, { status: 200, headers });
  };

  const app = new Hono();

  app.get('/', async (c) => {
    const shell = await asset('index.html');
    // The shell names its assets relative to wherever the routes are mounted.
    const base = escapeAttribute(c.req.path.replace(/\/+$/, ''));
    const body = shell.body.replaceAll('%BASE%', base);
    // The shell holds no data, but it must never be served from a shared cache after sign-out.
    return respond(c.req.raw, { body, etag: shell.etag }, HTML, 'no-store');
  });

  app.get('/app.css', async (c) => respond(c.req.raw, await asset('app.css'), CSS, 'no-cache'));
  for (const name of moduleNames()) {
    app.get(`/${name}`, async (c) => respond(c.req.raw, await asset(name), JAVASCRIPT, 'no-cache'));
  }

  return app;
}

/** The site icon: an anchor on the dashboard's blue, as SVG (every current browser takes it). */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b57a4"/><path d="M16 6v20M10 11h12M7 18c1 5 5 8 9 8s8-3 9-8" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/><circle cx="16" cy="6" r="2.5" fill="none" stroke="#fff" stroke-width="2"/></svg>';

/** `GET /favicon.ico`: the icon browsers ask every page for, rather than a 404 in every log. */
export function favicon(): Response {
  return new Response(FAVICON_SVG, {
    headers: {
      'Content-Type': 'image/svg+xml',
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    },
  });
}
