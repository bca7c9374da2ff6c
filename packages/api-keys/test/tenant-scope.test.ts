import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasScope, isLive, scopeFor, tenantOf } from '../src/index';

describe('tenants and scopes', () => {
  it('keeps live and test apart', () => {
    fc.assert(
      fc.property(fc.string(), (account) => {
        fc.pre(!isLive(account));
        expect(isLive(tenantOf(account, 'live'))).toBe(true);
        expect(tenantOf(account, 'test')).toBe(account);
        expect(tenantOf(account, 'live')).not.toBe(tenantOf(account, 'test'));
      }),
    );
  });

  it.each([
    [['*'], 'orders:write', true],
    [['orders:write'], 'orders:read', true],
    [['orders:read'], 'orders:write', false],
    [['payments:write'], 'orders:read', false],
  ])('%j holds %s: %s', (scopes, scope, held) => {
    expect(hasScope({ scopes: new Set(scopes) }, scope)).toBe(held);
  });

  it('maps methods to read and write scopes', () => {
    expect(scopeFor('orders', 'GET')).toBe('orders:read');
    expect(scopeFor('orders', 'HEAD')).toBe('orders:read');
    expect(scopeFor('orders', 'DELETE')).toBe('orders:write');
  });
});
