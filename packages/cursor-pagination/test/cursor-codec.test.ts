import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from '../src/base64url';
import { cappedTotal, pageEnvelope } from '../src/envelope';
import { cursorBinding, decodeCursor, encodeCursor, type Keyring } from '../src/index';
import { checkKeyring } from '../src/keyring';

const k1 = 'old-secret-old-secret-old-secret-0001';
const k2 = new TextEncoder().encode('new-secret-new-secret-new-secret-0002');
const keyring: Keyring = { current: 'k2', keys: { k2, k1 } };

describe('base64url (RFC 4648 section 5)', () => {
  it.each([
    // RFC 4648 section 10 test vectors, without padding.
    ['', ''],
    ['f', 'Zg'],
    ['fo', 'Zm8'],
    ['foo', 'Zm9v'],
    ['foob', 'Zm9vYg'],
    ['fooba', 'Zm9vYmE'],
    ['foobar', 'Zm9vYmFy'],
  ])('%j encodes to %j', (text, encoded) => {
    const bytes = new TextEncoder().encode(text);
    expect(encodeBase64url(bytes)).toBe(encoded);
    expect(decodeBase64url(encoded)).toEqual(bytes);
  });

  it('property: round-trips and matches Node', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const encoded = encodeBase64url(bytes);
        expect(encoded).toBe(Buffer.from(bytes).toString('base64url'));
        expect(decodeBase64url(encoded)).toEqual(bytes);
      }),
    );
  });

  it.each(['Zg==', 'Zh', 'Z', 'Zm9v+', 'Zm9v/', 'Zm 9v', 'Zm9v.'])('refuses %j', (text) => {
    expect(decodeBase64url(text)).toBeUndefined();
  });
});

describe('cursor codec (pagination rules 3 and 7)', () => {
  const payload = { binding: 'b1', values: ['2026-11-22 16:30:19.123+00', null, 'ord_1'] };

  it('is base64url of a small JSON object carrying a key id', async () => {
    const cursor = await encodeCursor(keyring, payload);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    expect(json).toMatchObject({ v: 1, kid: 'k2', b: 'b1', k: payload.values });
    expect(typeof json.s).toBe('string');
    expect(cursor.length).toBeLessThan(300);
    expect(await decodeCursor(keyring, cursor, { binding: 'b1', size: 3 })).toEqual({
      ok: true,
      value: payload,
    });
  });

  it('verifies cursors signed with a previous key and refuses those of a removed key', async () => {
    const old = await encodeCursor({ current: 'k1', keys: { k1 } }, payload);
    expect((await decodeCursor(keyring, old)).ok).toBe(true);
    const result = await decodeCursor({ current: 'k2', keys: { k2 } }, old);
    expect(result.ok || result.error.code).toBe('invalid_cursor');
  });

  it('never issues a cursor it would refuse, and accepts the largest it issues', async () => {
    const long = 'é'.repeat(512);
    const largest = await encodeCursor(keyring, { binding: 'b1', values: [long, long, long, long] });
    expect((await decodeCursor(keyring, largest)).ok).toBe(true);
    for (const values of [['x'.repeat(513), 'id'], ['a', null], [], ['a', 'b', 'c', 'd', 'id']]) {
      await expect(encodeCursor(keyring, { binding: 'b1', values })).rejects.toThrow(RangeError);
    }
  });

  it('refuses a cursor for another binding or another number of keys', async () => {
    const cursor = await encodeCursor(keyring, payload);
    for (const expected of [
      { binding: 'b2', size: 3 },
      { binding: 'b1', size: 2 },
    ]) {
      const result = await decodeCursor(keyring, cursor, expected);
      expect(result.ok || [result.error.code, result.error.status]).toEqual(['invalid_cursor', 400]);
    }
  });

  it('property: any altered cursor is a 400 invalid_cursor result, never a throw', async () => {
    const cursor = await encodeCursor(keyring, payload);
    const alteration = fc.oneof(
      fc.tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })).map(
        ([at, char]) =>
          (c: string) =>
            c.slice(0, at % c.length) + char + c.slice((at % c.length) + 1),
      ),
      fc.nat().map((n) => (c: string) => c.slice(0, n % c.length)),
      fc.string({ minLength: 1, maxLength: 4 }).map((tail) => (c: string) => c + tail),
      fc.constant((c: string) => `${c}==`),
      fc.constant((c: string) => Buffer.from(c, 'base64url').toString('base64')),
      fc.constant((c: string) =>
        encodeBase64url(new TextEncoder().encode(` ${new TextDecoder().decode(decodeBase64url(c))}`)),
      ),
    );
    await fc.assert(
      fc.asyncProperty(alteration, async (alter) => {
        const altered = alter(cursor);
        fc.pre(altered !== cursor);
        const result = await decodeCursor(keyring, altered, { binding: 'b1', size: 3 });
        expect(result.ok || [result.error.code, result.error.status]).toEqual(['invalid_cursor', 400]);
      }),
      { numRuns: 300 },
    );
  });

  it('binds to the canonical sort, filter and scope', async () => {
    const base = {
      sort: '-createdAt',
      filter: { status: 'pending' },
      scope: { account: 'acct_a', resource: 'orders' },
    };
    const binding = await cursorBinding(base);
    expect(await cursorBinding({ ...base, filter: { status: 'pending', other: undefined } })).toBe(binding);
    expect(await cursorBinding({ ...base, scope: { resource: 'orders', account: 'acct_a' } })).toBe(binding);
    for (const changed of [
      { ...base, sort: 'createdAt' },
      { ...base, filter: {} },
      { ...base, filter: { status: 'shipped' } },
      { ...base, filter: { status: null } },
      { ...base, scope: { account: 'acct_b', resource: 'orders' } },
      { ...base, scope: { account: 'acct_a', resource: 'payments' } },
    ]) {
      expect(await cursorBinding(changed)).not.toBe(binding);
    }
  });

  it.each([
    [{ current: 'k3', keys: { k2: k1 } }, /current/],
    [{ current: 'k2', keys: { k2: 'short' } }, /32 bytes/],
    [{ current: 'bad id', keys: { 'bad id': k1 } }, /key id/],
  ])('checkKeyring refuses a bad keyring (%#)', (ring, message) => {
    expect(() => checkKeyring(ring)).toThrow(message);
  });

  it('checkKeyring sees a keyring changed after it was accepted', () => {
    const ring: { current: string; keys: Record<string, string> } = { current: 'k1', keys: { k1 } };
    checkKeyring(ring);
    ring.keys.k1 = 'short';
    expect(() => checkKeyring(ring)).toThrow(/32 bytes/);
    ring.keys.k1 = k1;
    ring.current = 'k9';
    expect(() => checkKeyring(ring)).toThrow(/current/);
  });

  it('a key id given a new secret stops accepting what the old secret signed', async () => {
    const ring: { current: string; keys: Record<string, string> } = { current: 'k1', keys: { k1 } };
    const payload = { binding: 'b', values: ['2026-11-22 16:30:19.123+00', 'ord_1'] };
    const old = await encodeCursor(ring, payload);
    expect((await decodeCursor(ring, old)).ok).toBe(true);
    ring.keys.k1 = 'another-secret-another-secret-0003';
    expect((await decodeCursor(ring, old)).ok).toBe(false);
    const fresh = await encodeCursor(ring, payload);
    expect(fresh).not.toBe(old);
    expect((await decodeCursor(ring, fresh)).ok).toBe(true);
  });
});

describe('envelope (CONTRACT section 4)', () => {
  it.each([
    [0, 0, false],
    [9_999, 9_999, false],
    [10_000, 10_000, false],
    [10_001, 10_000, true],
  ])('count %i gives totalCount %i, capped %s', (count, totalCount, totalCountCapped) => {
    expect(cappedTotal(count)).toEqual({ totalCount, totalCountCapped });
  });

  it('wraps data and never shows a cursor on the last page', () => {
    expect(pageEnvelope([1], { nextCursor: 'x', hasMore: false })).toEqual({
      data: [1],
      pageInfo: { nextCursor: null, hasMore: false },
    });
    expect(pageEnvelope([], { nextCursor: 'x', hasMore: true, total: cappedTotal(3) })).toEqual({
      data: [],
      pageInfo: { nextCursor: 'x', hasMore: true, totalCount: 3, totalCountCapped: false },
    });
  });
});
