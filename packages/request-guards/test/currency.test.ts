import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { currencyCodes, isCurrency, minorUnits } from '../src/index';

describe('isCurrency', () => {
  it.each(['EUR', 'USD', 'JPY', 'KWD', 'UYW', 'XCG', 'ZWG'])('accepts the active code %s', (code) => {
    expect(isCurrency(code)).toBe(true);
  });

  it.each(['eur', 'EURO', 'XAU', 'XDR', 'ZWL', 'HRK', '', 'toString', '__proto__', 'constructor'])(
    'refuses %j: lower case, funds, metals, withdrawn codes and Object.prototype names',
    (code) => {
      expect(isCurrency(code)).toBe(false);
    },
  );

  it('holds exactly for the listed codes', () => {
    const listed = new Set(currencyCodes());
    fc.assert(
      fc.property(fc.string({ maxLength: 4 }), (code) => {
        expect(isCurrency(code)).toBe(listed.has(code));
      }),
    );
  });
});

describe('minorUnits', () => {
  // ISO 4217 list one, column "Minor unit".
  it.each([
    ['EUR', 2],
    ['USD', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['BHD', 3],
    ['KWD', 3],
    ['UYW', 4],
  ])('%s has %i', (code, units) => {
    expect(minorUnits(code)).toBe(units);
  });

  it('is undefined for anything that is not a currency', () => {
    expect(minorUnits('XAU')).toBeUndefined();
    expect(minorUnits('hasOwnProperty')).toBeUndefined();
  });

  it('is 0 to 4 for every listed code, each three upper-case letters, sorted', () => {
    const codes = currencyCodes();
    expect(codes.length).toBeGreaterThan(150);
    expect([...codes].sort()).toEqual(codes);
    for (const code of codes) {
      expect(code).toMatch(/^[A-Z]{3}$/);
      expect([0, 2, 3, 4]).toContain(minorUnits(code));
    }
  });
});
