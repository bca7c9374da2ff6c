import { type ProblemError, problem } from '@holdfast/problem-details';
import { hashKey, parseBearer } from './key';
import type { ApiKeyStore } from './store';
import { tenantOf } from './tenant';

/** Who is calling: resolved from the bearer key by {@link apiKeyAuthenticator}. */
export interface Principal {
  readonly keyId: string;
  /** The tenant: the key's account in test mode, `<account>:live` in live mode (`tenantOf`). */
  readonly account: string;
  /** Whether the key is a live key. */
  readonly livemode: boolean;
  readonly scopes: ReadonlySet<string>;
}

/**
 * A limit on failed attempts, such as a token bucket per client address: `check` throws (429)
 * when the caller is out of attempts; `spend` takes one. `C` is the door's request (Hono's
 * `Context`, Express's `Request`, Fastify's `FastifyRequest`, a Fetch `Request`).
 */
export interface FailureLimit<C> {
  check(c: C): Promise<void>;
  spend(c: C): Promise<void>;
}

/** Options of {@link apiKeyAuthenticator} (and of every door's `apiKeyAuth`). */
export interface ApiKeyAuthOptions<C> {
  readonly store: ApiKeyStore;
  /** The keys' prefix: `hf` accepts `hf_live_…` and `hf_test_…`. Default `hf`. */
  readonly prefix?: string;
  /** The `realm` of `WWW-Authenticate`. Default `api`. */
  readonly realm?: string;
  /**
   * Failed attempts (no key, a malformed or an unknown one) spend from this limit, and a caller
   * out of attempts is refused before any lookup. Known keys never spend.
   */
  readonly failures?: FailureLimit<C>;
  /** How long a known key is trusted without a lookup, ms. Default 30,000. */
  readonly cacheMs?: number;
  readonly now?: () => number;
}

const CACHE_MAX = 10_000;
// Unknown keys are remembered briefly, so a client retrying a bad key does not cost a lookup
// each time, yet a key created meanwhile works within a second.
const UNKNOWN_MS = 1_000;
const UNKNOWN_MAX = 10_000;

/**
 * Resolves an `Authorization` header to a {@link Principal}, or throws 401 `unauthenticated`
 * with `WWW-Authenticate: Bearer` (RFC 6750 section 3: no error code when no credentials came,
 * `invalid_token` when a key came but is malformed or unknown). Known keys are cached for
 * `cacheMs`, so the hot path costs no lookup and a deleted key stops working within that time;
 * a key not in the cache is looked up, so a key created while the server runs works at once;
 * unknown keys are remembered for 1 s (at most 10,000 of them). The framework-neutral core of
 * every door's `apiKeyAuth`; `c` is passed to `failures`.
 *
 * @example
 * ```ts
 * const authenticate = apiKeyAuthenticator<Request>({ store });
 * const principal = await authenticate(request.headers.get('authorization') ?? undefined, request);
 * ```
 */
export function apiKeyAuthenticator<C>(
  options: ApiKeyAuthOptions<C>,
): (authorization: string | undefined, c: C) => Promise<Principal> {
  const { store, prefix = 'hf', realm = 'api', failures, cacheMs = 30_000, now = Date.now } = options;
  const challenge = `Bearer realm="${realm}"`;
  const unauthenticated = (detail: string, presented = true) =>
    problem('unauthenticated', {
      detail,
      headers: { 'WWW-Authenticate': presented ? `${challenge}, error="invalid_token"` : challenge },
    });
  const cache = new Map<string, { principal: Principal; until: number }>();
  const unknown = new Map<string, number>();
  return async (header, c) => {
    const refuse = async (error: ProblemError) => {
      await failures?.spend(c);
      return error;
    };
    const bearer = header ? parseBearer(header, { prefix }) : undefined;
    const hash = bearer ? hashKey(bearer.key) : undefined;
    const cached = hash === undefined ? undefined : cache.get(hash);
    let principal = cached && cached.until > now() ? cached.principal : undefined;
    if (!principal) await failures?.check(c);
    if (!header)
      throw await refuse(unauthenticated('Send an API key as "Authorization: Bearer <key>".', false));
    if (!bearer || hash === undefined)
      throw await refuse(
        unauthenticated(`The Authorization header is not "Bearer <key>" with a ${prefix}_ key.`),
      );
    if (!principal) {
      const invalid = () => refuse(unauthenticated('The API key is not valid.'));
      if ((unknown.get(hash) ?? 0) > now()) throw await invalid();
      const record = await store.find(hash);
      if (!record) {
        // Bounded in size as in time: the oldest entry goes first (a Map keeps insertion order).
        unknown.delete(hash);
        if (unknown.size >= UNKNOWN_MAX) unknown.delete(unknown.keys().next().value ?? '');
        unknown.set(hash, now() + UNKNOWN_MS);
        throw await invalid();
      }
      unknown.delete(hash);
      principal = {
        keyId: record.id,
        account: tenantOf(record.account, bearer.mode),
        livemode: bearer.mode === 'live',
        scopes: new Set(record.scopes),
      };
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(hash, { principal, until: now() + cacheMs });
    }
    return principal;
  };
}

/**
 * 403 `forbidden` naming the missing `scope` (RFC 6750 section 3.1: `insufficient_scope`).
 *
 * @example
 * ```ts
 * if (!hasScope(principal, 'payments:read')) throw insufficientScope('payments:read');
 * ```
 */
export function insufficientScope(
  scope: string,
  options: { readonly detail?: string; readonly realm?: string } = {},
): ProblemError {
  const { detail = `This API key lacks the "${scope}" scope.`, realm = 'api' } = options;
  return problem('forbidden', {
    detail,
    headers: { 'WWW-Authenticate': `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"` },
  });
}
