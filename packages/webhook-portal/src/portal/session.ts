import type { Authorize, PortalCaller } from '../caller';

/**
 * Portal sessions: a service opens the portal for one of its customers with a short-lived signed
 * token, created on its backend. The token travels in the URL's fragment, which browsers never send
 * to a server, so it appears in no access log or `Referer`; the page moves it into the tab's session
 * storage and sends it as a Bearer token to the management API.
 *
 * A token is `hfps_<payload>.<signature>`: the payload is base64url JSON (account, mode, scopes,
 * read-only, expiry), the signature HMAC-SHA256 of everything before the dot.
 */

const PREFIX = 'hfps_';
/** A session outlives no working day: a link that leaks is soon worthless. */
const MAX_EXPIRES_IN_SECONDS = 24 * 60 * 60;
const MIN_SECRET_BYTES = 32;
/** Longer than any token this module writes for a sane number of scopes; longer is refused unread. */
const MAX_TOKEN_LENGTH = 8192;

/** Whom the portal session acts for. */
export interface PortalSessionClaims {
  /** The customer's account: every query of the management API is scoped by it. */
  readonly account: string;
  /** Live or test mode; give this or `mode`. */
  readonly livemode?: boolean | undefined;
  /** `'live'` or `'test'`; give this or `livemode`. */
  readonly mode?: 'test' | 'live' | undefined;
  /** The scopes the session holds. */
  readonly scopes: Iterable<string>;
  /** Seconds until the session expires (at most a day). */
  readonly expiresIn: number;
  /** A read-only session is refused every write by the management API. */
  readonly readOnly?: boolean | undefined;
}

/** The service's side of sessions: the shared secret and where the portal is served. */
export interface PortalSessionOptions {
  /** At least 32 bytes (a string is taken as UTF-8), shared with {@link portalSessionAuthorizer}. */
  readonly secret: string | Uint8Array;
  /** The portal page's absolute URL (`https://example.com/portal`). */
  readonly portalUrl: string | URL;
  /** The clock, in epoch milliseconds (tests). */
  readonly now?: (() => number) | undefined;
}

/** A created session: open `url` (or embed it in an iframe) to show the portal. */
export interface PortalSession {
  /** The portal URL with the token in its fragment (`#session=...`). */
  readonly url: string;
  /** The token alone, for a host that builds its own URL. */
  readonly token: string;
  readonly expiresAt: Date;
}

interface Payload {
  v: 1;
  a: string;
  l: boolean;
  s: string[];
  r: boolean;
  /** Expiry, epoch seconds. */
  e: number;
  /** A nonce: two sessions for the same claims are two different tokens. */
  n: string;
}

const encoder = new TextEncoder();

function secretBytes(secret: string | Uint8Array): Uint8Array<ArrayBuffer> {
  // A copy: the caller's array may be a view of a shared buffer, which WebCrypto refuses.
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : new Uint8Array(secret);
  if (bytes.byteLength < MIN_SECRET_BYTES)
    throw new TypeError(`Portal sessions need a secret of at least ${MIN_SECRET_BYTES} bytes.`);
  return bytes;
}

function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

function livemodeOf(claims: PortalSessionClaims): boolean {
  const fromMode = claims.mode === undefined ? undefined : claims.mode === 'live';
  if (claims.mode !== undefined && claims.mode !== 'live' && claims.mode !== 'test')
    throw new TypeError('createPortalSession: mode is "test" or "live".');
  if (fromMode !== undefined && claims.livemode !== undefined && fromMode !== claims.livemode)
    throw new TypeError('createPortalSession: mode and livemode disagree.');
  const livemode = fromMode ?? claims.livemode;
  if (livemode === undefined)
    throw new TypeError('createPortalSession: give mode ("test" or "live") or livemode.');
  return livemode;
}

function payloadOf(claims: PortalSessionClaims, nowMs: number): Payload {
  if (typeof claims.account !== 'string' || claims.account === '')
    throw new TypeError('createPortalSession: account is a non-empty string.');
  const { expiresIn } = claims;
  if (!Number.isFinite(expiresIn) || expiresIn <= 0 || expiresIn > MAX_EXPIRES_IN_SECONDS)
    throw new RangeError(
      `createPortalSession: expiresIn is between 1 and ${MAX_EXPIRES_IN_SECONDS} seconds.`,
    );
  return {
    v: 1,
    a: claims.account,
    l: livemodeOf(claims),
    s: [...new Set(claims.scopes)].map(String),
    r: claims.readOnly === true,
    e: Math.floor(nowMs / 1000 + expiresIn),
    n: toBase64Url(crypto.getRandomValues(new Uint8Array(12))),
  };
}

/**
 * Creates a portal session for one customer: a signed, expiring token and the portal URL that
 * carries it in its fragment. Call it on your backend, after your own sign-in, and send the user
 * to `url` (or set it as an iframe's `src`).
 *
 * @example
 * ```ts
 * const session = await createPortalSession(
 *   { account: 'acct_123', mode: 'test', scopes: ['webhooks:read'], expiresIn: 900, readOnly: true },
 *   { secret: process.env.PORTAL_SECRET!, portalUrl: 'https://example.com/portal' },
 * );
 * ```
 */
export async function createPortalSession(
  claims: PortalSessionClaims,
  options: PortalSessionOptions,
): Promise<PortalSession> {
  const payload = payloadOf(claims, (options.now ?? Date.now)());
  const key = await hmacKey(options.secret);
  const head = PREFIX + toBase64Url(encoder.encode(JSON.stringify(payload)));
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(head)));
  const token = `${head}.${toBase64Url(signature)}`;
  const url = new URL(options.portalUrl);
  url.hash = `session=${token}`;
  return { url: url.href, token, expiresAt: new Date(payload.e * 1000) };
}

function callerOf(value: unknown): (PortalCaller & { readonly expiresAt: number }) | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const p = value as Partial<Record<keyof Payload, unknown>>;
  if (p.v !== 1 || typeof p.a !== 'string' || p.a === '' || typeof p.l !== 'boolean') return undefined;
  if (!Array.isArray(p.s) || !p.s.every((s) => typeof s === 'string')) return undefined;
  if (typeof p.e !== 'number' || typeof p.r !== 'boolean') return undefined;
  return { account: p.a, livemode: p.l, scopes: new Set(p.s), readOnly: p.r, expiresAt: p.e * 1000 };
}

/** The token of an `Authorization: Bearer hfps_...` header, or undefined. */
function bearerSession(request: Request): string | undefined {
  const match = /^Bearer[ ]+(hfps_\S+)$/i.exec(request.headers.get('Authorization') ?? '');
  const token = match?.[1];
  return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
}

/**
 * The `authorize` of the management API for portal sessions: the caller of a request whose
 * `Authorization: Bearer` holds a session token made with the same secret and not yet expired
 * (read-only carried); `undefined` (401) for a missing, forged or expired one. Compose it with your
 * own `authorize` to accept your API keys as well.
 *
 * @example
 * ```ts
 * const authorize = portalSessionAuthorizer({ secret: process.env.PORTAL_SECRET! });
 * const caller = await authorize(request); // PortalCaller | undefined
 * ```
 */
export function portalSessionAuthorizer(options: {
  readonly secret: string | Uint8Array;
  readonly now?: (() => number) | undefined;
}): Authorize {
  const key = hmacKey(options.secret);
  const now = options.now ?? Date.now;
  return async (request) => {
    const token = bearerSession(request);
    const dot = token?.indexOf('.') ?? -1;
    if (token === undefined || dot === -1) return undefined;
    const signature = fromBase64Url(token.slice(dot + 1));
    const body = fromBase64Url(token.slice(PREFIX.length, dot));
    if (signature === undefined || body === undefined) return undefined;
    // verify compares in constant time: a forged signature learns nothing from the timing.
    const valid = await crypto.subtle.verify(
      'HMAC',
      await key,
      signature,
      encoder.encode(token.slice(0, dot)),
    );
    if (!valid) return undefined;
    let caller: ReturnType<typeof callerOf>;
    try {
      caller = callerOf(JSON.parse(new TextDecoder().decode(body)));
    } catch {
      return undefined;
    }
    if (caller === undefined || caller.expiresAt <= now()) return undefined;
    const { expiresAt: _expiresAt, ...result } = caller;
    return result;
  };
}
