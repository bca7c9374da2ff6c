/** What a key may do: its scopes (`orders:read`, `orders:write`, `*`). */
export interface Scoped {
  readonly scopes: ReadonlySet<string>;
}

/**
 * Whether `principal` holds `scope`: `*` holds every scope, and `x:write` implies `x:read`
 * (a key that may change orders may also see them, as with Stripe's restricted keys).
 *
 * @example
 * ```ts
 * hasScope({ scopes: new Set(['orders:write']) }, 'orders:read'); // true
 * ```
 */
export function hasScope(principal: Scoped, scope: string): boolean {
  if (principal.scopes.has('*') || principal.scopes.has(scope)) return true;
  return scope.endsWith(':read') && principal.scopes.has(`${scope.slice(0, -5)}:write`);
}

/**
 * The scope a request needs: `<resource>:read` for GET and HEAD, `<resource>:write` otherwise.
 *
 * @example
 * ```ts
 * scopeFor('orders', 'POST'); // 'orders:write'
 * ```
 */
export function scopeFor(resource: string, method: string): string {
  return `${resource}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}`;
}
