import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { problem } from '@holdfast/problem-details';
import { contentSecurityPolicy, frameOptions, type PortalOrigins, portalOrigins } from './policy';

/** How {@link portalPages} serves the portal. */
export interface PortalPagesOptions {
  /** The path the page lives at (`/portal`); its scripts and stylesheet are served beneath it. */
  readonly basePath: string;
  /**
   * Where the management API is mounted: a path on the same origin (`/v1`, `/api/webhooks`) or an
   * absolute `https://` URL (then the page may also connect to that origin). The page calls only it.
   */
  readonly apiBase: string;
  /**
   * Origins allowed to embed the page in an iframe (`https://app.example.com`, or `'self'`).
   * Empty or absent: nobody may frame it (`frame-ancestors 'none'`).
   */
  readonly frameAncestors?: readonly string[] | undefined;
  /**
   * The event types the page offers when an endpoint is created or deliveries are filtered: the
   * same list the management API accepts. The page reads it from `{basePath}/event-types`.
   */
  readonly eventTypes?: readonly string[] | undefined;
}

/**
 * A Fetch handler: a `Response` for a request under `basePath`, `undefined` for any other path
 * (so the host passes it on to its own routes).
 */
export type PortalPagesHandler = (request: Request) => Promise<Response | undefined>;

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
// Module scripts must be served with a JavaScript MIME type, or the browser refuses to run them.
const JAVASCRIPT = 'text/javascript; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const SVG = 'image/svg+xml; charset=utf-8';

const CONTENT_TYPES: Readonly<Record<string, string>> = { '.js': JAVASCRIPT, '.css': CSS, '.svg': SVG };

interface Asset {
  readonly body: string;
  readonly etag: string;
  readonly type: string;
}

/**
 * The page's files: `portal/` beside `src/` in the workspace and beside `dist/` in the published
 * package, so both layouts find the same folder.
 */
function assetsDirectory(): URL {
  for (const candidate of ['../../portal/', '../portal/']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(new URL('index.html', url)))) return url;
  }
  throw new Error('@holdfast/webhook-portal: the portal folder is missing from the installed package.');
}

async function etagOf(body: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body));
  return `"${Buffer.from(digest).toString('base64url').slice(0, 27)}"`;
}

async function asset(body: string, type: string): Promise<Asset> {
  return { body, type, etag: await etagOf(body) };
}

/**
 * Every file the page may load, read once: only these names are served, so no request names a
 * file on disk (no path traversal, no stray file of the folder).
 */
async function loadAssets(directory: URL): Promise<Map<string, Asset>> {
  const names = await readdir(directory, { recursive: true, encoding: 'utf8' });
  const assets = new Map<string, Asset>();
  for (const raw of names.sort()) {
    const name = raw.replaceAll('\\', '/');
    const dot = name.lastIndexOf('.');
    const type = CONTENT_TYPES[dot === -1 ? '' : name.slice(dot)];
    if (type === undefined) continue;
    assets.set(name, await asset(await readFile(new URL(name, directory), 'utf8'), type));
  }
  return assets;
}

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

function normalizeBasePath(basePath: string): string {
  if (!basePath.startsWith('/') || /[?#\s]/.test(basePath))
    throw new TypeError(
      `portalPages: basePath must be a path starting with "/", not ${JSON.stringify(basePath)}.`,
    );
  return basePath.replace(/\/+$/, '');
}

interface Site {
  readonly basePath: string;
  readonly apiBase: string;
  readonly origins: PortalOrigins;
  readonly eventTypes: readonly string[];
}

async function loadSite(site: Site): Promise<Map<string, Asset>> {
  const directory = assetsDirectory();
  const assets = await loadAssets(directory);
  const shell = await readFile(new URL('index.html', directory), 'utf8');
  // The shell names its assets and the API without inline script: attributes the modules read.
  const html = shell
    .replaceAll('%BASE%', escapeAttribute(site.basePath))
    .replaceAll('%API%', escapeAttribute(site.apiBase));
  assets.set('', await asset(html, HTML));
  assets.set('event-types', await asset(JSON.stringify({ data: site.eventTypes }), JSON_TYPE));
  return assets;
}

function respond(request: Request, file: Asset, headers: Headers): Response {
  // The shell holds no data, but it must never come from a shared cache after sign-out.
  headers.set('Cache-Control', file.type === HTML ? 'no-store' : 'no-cache');
  headers.set('ETag', file.etag);
  if (request.headers.get('If-None-Match') === file.etag) return new Response(null, { status: 304, headers });
  headers.set('Content-Type', file.type);
  return new Response(request.method === 'HEAD' ? null : file.body, { status: 200, headers });
}

function securityHeaders(origins: PortalOrigins): Headers {
  const headers = new Headers({
    'Content-Security-Policy': contentSecurityPolicy(origins),
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  });
  const xfo = frameOptions(origins);
  if (xfo !== undefined) headers.set('X-Frame-Options', xfo);
  return headers;
}

/**
 * The portal's pages as a Fetch handler: the HTML shell at `basePath`, its stylesheet and ES
 * modules beneath it, and the event types it offers. The page talks only to the management API at
 * `apiBase`, sending the caller's token (an API key or a portal session) as a Bearer token. Every
 * answer carries a strict Content-Security-Policy: no inline script, nothing from another origin,
 * Trusted Types, and `frame-ancestors` from `frameAncestors`.
 *
 * @example
 * ```ts
 * const pages = portalPages({ basePath: '/portal', apiBase: '/api/webhooks', eventTypes: ['order.created'] });
 * const response = await pages(new Request('https://example.com/portal'));
 * ```
 */
export function portalPages(options: PortalPagesOptions): PortalPagesHandler {
  const site: Site = {
    basePath: normalizeBasePath(options.basePath),
    apiBase: options.apiBase.replace(/\/+$/, ''),
    origins: portalOrigins(options.apiBase, options.frameAncestors ?? []),
    eventTypes: [...(options.eventTypes ?? [])],
  };
  let assets: Promise<Map<string, Asset>> | undefined;
  const load = (): Promise<Map<string, Asset>> => {
    if (assets === undefined) {
      assets = loadSite(site);
      // A failed read is retried on the next request instead of being remembered.
      assets.catch(() => {
        assets = undefined;
      });
    }
    return assets;
  };
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (path !== site.basePath && !path.startsWith(`${site.basePath}/`)) return undefined;
    const name = path.slice(site.basePath.length + 1);
    const headers = securityHeaders(site.origins);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const response = problem('method_not_allowed').toResponse({ instance: path });
      response.headers.set('Allow', 'GET, HEAD');
      return response;
    }
    const file = (await load()).get(name);
    if (file === undefined) return problem('not_found').toResponse({ instance: path });
    return respond(request, file, headers);
  };
}
