import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

// Issue 35: the variables of the pipelining bound, the connection groups and the public rate
// limit, their defaults and their refusals.

describe('HOLDFAST_IPV4_PREFIX, HOLDFAST_MAX_PIPELINED, HOLDFAST_PUBLIC_RATE_LIMIT', () => {
  it('default to a /24, 16 unanswered requests and 50/1s with a burst of 100', () => {
    const { http } = loadConfig({});
    expect(http.ipv4PrefixLength).toBe(24);
    expect(http.maxPipelined).toBe(16);
    expect(http.publicRateLimit).toEqual({ limit: 50, windowMs: 1000, burst: 100 });
  });

  it('take what is set', () => {
    const { http } = loadConfig({
      HOLDFAST_IPV4_PREFIX: '32',
      HOLDFAST_MAX_PIPELINED: '4',
      HOLDFAST_PUBLIC_RATE_LIMIT: '5/1m:10',
    });
    expect(http.ipv4PrefixLength).toBe(32);
    expect(http.maxPipelined).toBe(4);
    expect(http.publicRateLimit).toEqual({ limit: 5, windowMs: 60_000, burst: 10 });
  });

  it.each([
    ['HOLDFAST_IPV4_PREFIX', '7'],
    ['HOLDFAST_IPV4_PREFIX', '33'],
    ['HOLDFAST_IPV4_PREFIX', '24.5'],
    ['HOLDFAST_MAX_PIPELINED', '1'],
    ['HOLDFAST_MAX_PIPELINED', 'many'],
    ['HOLDFAST_PUBLIC_RATE_LIMIT', 'lots'],
  ])('refuses %s=%s at start, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('HOLDFAST_DELIVERY_ACCOUNT_SHARE', () => {
  it('defaults to a quarter of the slots and takes what is set', () => {
    expect(loadConfig({}).delivery.accountShare).toBe(0.25);
    expect(loadConfig({ HOLDFAST_DELIVERY_ACCOUNT_SHARE: '0.5' }).delivery.accountShare).toBe(0.5);
    expect(loadConfig({ HOLDFAST_DELIVERY_ACCOUNT_SHARE: '1' }).delivery.accountShare).toBe(1);
  });

  it.each(['0', '-0.1', '1.5', 'half'])(
    'refuses HOLDFAST_DELIVERY_ACCOUNT_SHARE=%s at start, naming it',
    (value) => {
      expect(() => loadConfig({ HOLDFAST_DELIVERY_ACCOUNT_SHARE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ HOLDFAST_DELIVERY_ACCOUNT_SHARE: value })).toThrow(
        'HOLDFAST_DELIVERY_ACCOUNT_SHARE',
      );
    },
  );
});
