import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromZodError } from '../src/index';

const Card = z
  .object({
    brand: z.string(),
    last4: z.string().regex(/^\d{4}$/),
    expMonth: z.number().int().min(1).max(12),
  })
  .strict();
const PaymentMethod = z.object({ type: z.literal('card'), card: Card }).strict();

describe('fromZodError', () => {
  it('turns each unknown key into its own unknown_field entry, naming it', () => {
    const result = PaymentMethod.safeParse({
      type: 'card',
      colour: 'red',
      size: 1,
      card: { brand: 'visa', last4: '4242', expMonth: 1, cvc: '123' },
    });
    expect(result.success).toBe(false);
    if (result.success) return;
    const error = fromZodError(result.error);
    expect(error.status).toBe(400);
    expect(error.code).toBe('unknown_field');
    const unknown = error.errors.filter((entry) => entry.code === 'unknown_field');
    expect(unknown.map((entry) => entry.field).sort()).toEqual(['card.cvc', 'colour', 'size']);
    expect(unknown.find((entry) => entry.field === 'card.cvc')?.pointer).toBe('#/card/cvc');
    expect(error.detail).toContain('"colour"');
  });

  it('reports the rest as validation_failed with field path and pointer', () => {
    const result = PaymentMethod.safeParse({ type: 'card', card: { brand: 7, last4: '42', expMonth: 13 } });
    expect(result.success).toBe(false);
    if (result.success) return;
    const error = fromZodError(result.error);
    expect(error.code).toBe('validation_failed');
    expect(error.errors.map((entry) => [entry.field, entry.pointer, entry.code])).toEqual([
      ['card.brand', '#/card/brand', 'invalid_type'],
      ['card.last4', '#/card/last4', 'invalid_format'],
      ['card.expMonth', '#/card/expMonth', 'too_big'],
    ]);
    for (const entry of error.errors) expect(entry.detail).toBeTruthy();
  });

  it('escapes pointer tokens as RFC 6901 says', () => {
    const result = z.object({ 'a/b': z.object({ 'c~d': z.number() }) }).safeParse({ 'a/b': { 'c~d': 'x' } });
    if (result.success) throw new Error('expected failure');
    expect(fromZodError(result.error).errors[0]?.pointer).toBe('#/a~1b/c~0d');
  });

  it('names query parameters without a body pointer', () => {
    const result = z.object({ limit: z.string() }).strict().safeParse({ limit: '1', colour: 'x' });
    if (result.success) throw new Error('expected failure');
    const error = fromZodError(result.error, { location: 'query' });
    expect(error.code).toBe('unknown_field');
    expect(error.errors).toEqual([
      { field: 'colour', code: 'unknown_field', detail: 'Unknown query parameter "colour".' },
    ]);
  });

  it('describes a root-level failure', () => {
    const result = PaymentMethod.safeParse([]);
    if (result.success) throw new Error('expected failure');
    expect(fromZodError(result.error).errors[0]?.field).toBe('(root)');
  });
});
