import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventSequence, eventVersion } from '../src/receiver';

describe('eventSequence', () => {
  it.each([
    [{ sequence: 7 }, 7],
    [{ sequence: '42' }, 42],
    [{ sequence: 0 }, 0],
    [{ sequence: -1 }, null],
    [{ sequence: 1.5 }, null],
    [{ sequence: '1e3' }, null],
    [{ sequence: 2 ** 53 }, null],
    [{}, null],
    [null, null],
    [[1], null],
  ])('%j is %j', (payload, sequence) => {
    expect(eventSequence(payload)).toBe(sequence);
  });
});

describe('eventVersion', () => {
  it('prefers the sequence, then updatedAt', () => {
    const object = { id: 'ord_1', updatedAt: '2026-11-22T18:00:00.000Z' };
    expect(eventVersion({ sequence: 3, data: { object } })).toEqual({ resource: 'ord_1', version: 3 });
    expect(eventVersion({ data: { object } })).toEqual({
      resource: 'ord_1',
      version: Date.parse(object.updatedAt),
    });
  });

  it('is undefined without a usable id or version', () => {
    expect(eventVersion({ sequence: 1, data: { object: { id: '' } } })).toBeUndefined();
    expect(eventVersion({ sequence: 1, data: { object: { id: 'x'.repeat(256) } } })).toBeUndefined();
    expect(eventVersion({ data: { object: { id: 'ord_1', updatedAt: 'yesterday' } } })).toBeUndefined();
    expect(eventVersion({ data: [] })).toBeUndefined();
  });

  it('never throws, whatever the payload', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (payload) => {
        const version = eventVersion(payload);
        if (version) expect(Number.isSafeInteger(version.version) && version.version >= 0).toBe(true);
      }),
    );
  });
});
