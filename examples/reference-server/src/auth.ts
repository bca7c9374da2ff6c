import { createHash, randomBytes } from 'node:crypto';
import { opaqueId } from '@holdfast/opaque-id';
import { type ProblemError, problem } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import type postgres from 'postgres';
import type { SeedKey } from './config';
import type { AppEnv, Principal } from './context';
import { clientAddress, type Limiter } from './rate-limit';

// API keys (CONTRACT section 3): `hf_live_<opaque>` / `hf_test_<opaque>`, stored only as
// SHA-256 hashes (the keys are 192-bit random strings, so a fast hash is enough: there is
// nothing to brute-force), each bound to one account and a set of scopes.

/** SHA-256 of a key, hex: what the database stores instead of the key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A new key: the mode prefix and 192 random bits in base64url. Shown once, never stored. */
export function generateKey(mode: 'live' | 'test' = 'test'): string {
  return `hf_${mode}_${randomBytes(24).toString('base64url')}`;
}

/** Stores a key's hash (idempotent: seeding the same key again changes nothing but its scopes). */
export async function storeKey(sql: postgres.Sql, key: SeedKey): Promise<void> {
  await sql`
    insert into holdfast_api_keys (id, key_hash, key_prefix, account, scopes)
    values (${opaqueId('key')}, ${hashKey(key.key)}, ${key.key.slice(0, 12)}, ${key.account}, ${sql.array([...key.scopes])})
    on conflict (key_hash) do update set account = excluded.account, scopes = excluded.scopes`;
}

/** Creates a key for `account` with `scopes` and returns it: the only time it is visible. */
export async function createKey(
  sql: postgres.Sql,
  account: string,
  scopes: readonly string[],
  mode: 'live' | 'test' = 'test',
): Promise<string> {
  const key = generateKey(mode);
  await storeKey(sql, { key, account, scopes });
  return key;
}

// Test and live data are two disjoint worlds (CONTRACT section 10), as Stripe's livemode: the
// tenant every row belongs to is the account in test mode and `<account>:live` in live mode, so
// every query scoped by the tenant sees one mode's rows only, and packages (idempotency, webhook
// delivery, pagination bindings) keep them apart with no change of their own. Keys made before
// this rule keep working: a test key's tenant is its bare account, as before.

const LIVE_SUFFIX = ':live';

/** The tenant of `account` in `mode`: what every `account_id` column holds. */
export function tenantOf(account: string, mode: 'live' | 'test'): string {
  return mode === 'live' ? `${account}${LIVE_SUFFIX}` : account;
}

/** Whether a tenant (an `account_id` value) is live mode. */
export function isLive(tenant: string): boolean {
  return tenant.endsWith(LIVE_SUFFIX);
}

const BEARER = /^Bearer\s+(hf_(?:live|test)_[A-Za-z0-9_-]{16,128})\s*$/i;
const CACHE_MS = 30_000;
const CACHE_MAX = 10_000;
// Unknown keys are remembered briefly, so a client retrying a bad key does not cost a query each
// time, yet a key created meanwhile (`keys:create` while the server runs) works within a second.
const UNKNOWN_MS = 1_000;
const UNKNOWN_MAX = 10_000;

// RFC 6750 section 3: no error code when no credentials came, `invalid_token` when a key came
// but is malformed or unknown, `insufficient_scope` (with the scope wanted) on a 403.
const REALM = 'Bearer realm="holdfast"';
const unauthenticated = (detail: string, presented = true) =>
  problem('unauthenticated', {
    detail,
    headers: { 'WWW-Authenticate': presented ? `${REALM}, error="invalid_token"` : REALM },
  });

/**
 * Resolves `Authorization: Bearer <key>` to a principal, or answers 401 `unauthenticated`
 * with `WWW-Authenticate: Bearer`. Lookups are cached for 30 s per process so the hot path
 * costs no database round trip; a deleted key stops working within that time. A key not in the
 * cache is looked up in the database, so a key created while the server runs works at once;
 * unknown keys are remembered for 1 s (at most 10,000 of them).
 */
export function authenticate(
  sql: postgres.Sql,
  now: () => number = Date.now,
  failures?: Limiter,
): MiddlewareHandler<AppEnv> {
  const cache = new Map<string, { principal: Principal; until: number }>();
  const unknown = new Map<string, number>();
  return async (c, next) => {
    // A missing, malformed or unknown key spends a token of its address (CONTRACT section 10);
    // an address out of tokens is 429 before any database work. Known keys never spend one.
    const address = failures ? clientAddress(c) : undefined;
    const refuse = async (error: ProblemError) => {
      if (failures && address) await failures.spend(address);
      return error;
    };
    const header = c.req.header('authorization');
    const match = header ? BEARER.exec(header) : null;
    const hash = match?.[1] ? hashKey(match[1]) : undefined;
    const cached = hash === undefined ? undefined : cache.get(hash);
    let principal = cached && cached.until > now() ? cached.principal : undefined;
    if (!principal && failures && address) await failures.check(address);
    if (!header)
      throw await refuse(unauthenticated('Send an API key as "Authorization: Bearer <key>".', false));
    if (!match?.[1] || hash === undefined)
      throw await refuse(
        unauthenticated('The Authorization header is not "Bearer <key>" with a Holdfast key.'),
      );
    if (!principal) {
      const invalid = () => refuse(unauthenticated('The API key is not valid.'));
      if ((unknown.get(hash) ?? 0) > now()) throw await invalid();
      const [row] = await sql<{ id: string; account: string; scopes: string[] }[]>`
        select id, account, scopes from holdfast_api_keys where key_hash = ${hash}`;
      if (!row) {
        // Bounded in size as in time: the oldest entry goes first (a Map keeps insertion order).
        unknown.delete(hash);
        if (unknown.size >= UNKNOWN_MAX) unknown.delete(unknown.keys().next().value ?? '');
        unknown.set(hash, now() + UNKNOWN_MS);
        throw await invalid();
      }
      unknown.delete(hash);
      const livemode = match[1].startsWith('hf_live_');
      principal = {
        keyId: row.id,
        account: tenantOf(row.account, livemode ? 'live' : 'test'),
        livemode,
        scopes: new Set(row.scopes),
      };
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(hash, { principal, until: now() + CACHE_MS });
    }
    c.set('principal', principal);
    await next();
  };
}

/**
 * Whether `principal` holds `scope`: `*` holds every scope, and `x:write` implies `x:read`
 * (a key that may change orders may also see them, as with Stripe's restricted keys).
 */
export function hasScope(principal: Principal, scope: string): boolean {
  if (principal.scopes.has('*') || principal.scopes.has(scope)) return true;
  return scope.endsWith(':read') && principal.scopes.has(`${scope.slice(0, -5)}:write`);
}

/** 403 `forbidden` naming the missing `scope` (RFC 6750 section 3.1: `insufficient_scope`). */
export function insufficientScope(scope: string, detail = `This API key lacks the "${scope}" scope.`) {
  return problem('forbidden', {
    detail,
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  });
}

/**
 * 403 `forbidden` unless the caller's key holds `scope`. Runs after `authenticate()`, so an
 * unauthenticated request gets 401 first and never learns anything from a 403.
 */
export function requireScope(scope: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!hasScope(c.get('principal'), scope)) throw insufficientScope(scope);
    await next();
  };
}

/** The scope a request needs: `<resource>:read` for GET/HEAD, `<resource>:write` otherwise. */
export function scopeFor(
  resource: 'orders' | 'payments' | 'subscriptions' | 'webhooks',
  method: string,
): string {
  return `${resource}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}`;
}
