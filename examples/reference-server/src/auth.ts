import { createHash, randomBytes } from 'node:crypto';
import { opaqueId, problem } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import type postgres from 'postgres';
import type { SeedKey } from './config';
import type { AppEnv, Principal } from './context';

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

const BEARER = /^Bearer\s+(hf_(?:live|test)_[A-Za-z0-9_-]{16,128})\s*$/i;
const CACHE_MS = 30_000;
const CACHE_MAX = 10_000;

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
 * costs no database round trip; a deleted key stops working within that time.
 */
export function authenticate(sql: postgres.Sql, now: () => number = Date.now): MiddlewareHandler<AppEnv> {
  const cache = new Map<string, { principal: Principal; until: number }>();
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (!header) throw unauthenticated('Send an API key as "Authorization: Bearer <key>".', false);
    const match = BEARER.exec(header);
    if (!match?.[1])
      throw unauthenticated('The Authorization header is not "Bearer <key>" with a Holdfast key.');
    const hash = hashKey(match[1]);
    const cached = cache.get(hash);
    let principal = cached && cached.until > now() ? cached.principal : undefined;
    if (!principal) {
      const [row] = await sql<{ id: string; account: string; scopes: string[] }[]>`
        select id, account, scopes from holdfast_api_keys where key_hash = ${hash}`;
      if (!row) throw unauthenticated('The API key is not valid.');
      principal = { keyId: row.id, account: row.account, scopes: new Set(row.scopes) };
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

/**
 * 403 `forbidden` unless the caller's key holds `scope`. Runs after `authenticate()`, so an
 * unauthenticated request gets 401 first and never learns anything from a 403.
 */
export function requireScope(scope: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!hasScope(c.get('principal'), scope)) {
      throw problem('forbidden', {
        detail: `This API key lacks the "${scope}" scope.`,
        headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
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
