import { describe, expect, it } from 'vitest';
import { newRequestId, opaqueId } from '../src/opaque-id';

describe('newRequestId', () => {
  it('is req_ and 22 base64url characters that decode to 16 bytes', () => {
    for (let i = 0; i < 1000; i += 1) {
      const id = newRequestId();
      expect(id).toMatch(/^req_[A-Za-z0-9_-]{21}[AQgw]$/);
      const bytes = Buffer.from(id.slice(4), 'base64url');
      expect(bytes.length).toBe(16);
      expect(bytes.toString('base64url')).toBe(id.slice(4));
    }
  });

  it('never repeats across many batches of the random pool', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newRequestId()));
    expect(ids.size).toBe(20_000);
  });

  it('uses every bit: each of the 128 positions takes both values', () => {
    const seen = Array.from({ length: 128 }, () => new Set<number>());
    for (let i = 0; i < 2000; i += 1) {
      const bytes = Buffer.from(newRequestId().slice(4), 'base64url');
      for (let bit = 0; bit < 128; bit += 1) seen[bit]?.add(((bytes[bit >> 3] ?? 0) >> (7 - (bit & 7))) & 1);
    }
    expect(seen.every((values) => values.size === 2)).toBe(true);
  });

  it('opaqueId takes any prefix and draws from the same pool', () => {
    expect(opaqueId('evt')).toMatch(/^evt_[A-Za-z0-9_-]{21}[AQgw]$/);
    const ids = new Set(
      Array.from({ length: 600 }, (_, i) => (i % 2 ? opaqueId('x') : newRequestId()).slice(-22)),
    );
    expect(ids.size).toBe(600);
  });
});
