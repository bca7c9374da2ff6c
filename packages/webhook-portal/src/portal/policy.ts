/**
 * The portal's Content-Security-Policy. No inline script or style anywhere, so the policy needs no
 * nonce or hash; Trusted Types make any accidental `innerHTML` with a string throw instead of
 * becoming an injection point. Only the configured origins widen it: the API's (when it is on
 * another origin) for `connect-src`, the embedding products' for `frame-ancestors`.
 */

/** What the policy allows beyond the page's own origin. */
export interface PortalOrigins {
  /** The API's origin when `apiBase` is an absolute URL; undefined for a path on the same origin. */
  readonly api: string | undefined;
  /** `frame-ancestors` sources: `'self'` and origins. Empty: `'none'`. */
  readonly frameAncestors: readonly string[];
}

/** An origin (`https://app.example.com`, `http://localhost:3000`), nothing more: no path, no list. */
function origin(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(
      `portalPages: ${what} must be an origin such as https://app.example.com, not ${JSON.stringify(value)}.`,
    );
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== value.replace(/\/$/, ''))
    throw new TypeError(
      `portalPages: ${what} must be an origin such as https://app.example.com, not ${JSON.stringify(value)}.`,
    );
  return url.origin;
}

/** Validates the configured origins once, so nothing from configuration can split a header. */
export function portalOrigins(apiBase: string, frameAncestors: readonly string[]): PortalOrigins {
  let api: string | undefined;
  if (!apiBase.startsWith('/')) {
    let url: URL;
    try {
      url = new URL(apiBase);
    } catch {
      throw new TypeError(
        `portalPages: apiBase must be a path ("/v1") or an absolute URL, not ${JSON.stringify(apiBase)}.`,
      );
    }
    api = origin(url.origin, 'the origin of apiBase');
  } else if (/[\s"'<>\\]/.test(apiBase) || apiBase.startsWith('//')) {
    throw new TypeError(
      `portalPages: apiBase must be a path ("/v1") or an absolute URL, not ${JSON.stringify(apiBase)}.`,
    );
  }
  const sources = frameAncestors.map((source) =>
    source === "'self'" || source === 'self' ? "'self'" : origin(source, 'every frameAncestors entry'),
  );
  return { api, frameAncestors: [...new Set(sources)] };
}

/** The page's policy. */
export function contentSecurityPolicy(origins: PortalOrigins): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    origins.api === undefined ? "connect-src 'self'" : `connect-src 'self' ${origins.api}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${origins.frameAncestors.length === 0 ? "'none'" : origins.frameAncestors.join(' ')}`,
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');
}

/**
 * `X-Frame-Options` for browsers that predate `frame-ancestors`: it can say only "nobody" or "this
 * origin", so it is left out when other origins may embed the page.
 */
export function frameOptions(origins: PortalOrigins): string | undefined {
  if (origins.frameAncestors.length === 0) return 'DENY';
  if (origins.frameAncestors.length === 1 && origins.frameAncestors[0] === "'self'") return 'SAMEORIGIN';
  return undefined;
}
