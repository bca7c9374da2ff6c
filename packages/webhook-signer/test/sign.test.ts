import { decodeSecret, MIN_SECRET_BYTES } from '@holdfast/webhook-keys';
import { specVector } from '@holdfast/webhook-keys/spec-vector';
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { createSigner, generateSecret } from '../src/index';

// The Standard Webhooks specification's example.
const vector = specVector;

describe('createSigner', () => {
  it('matches the Standard Webhooks example signature', () => {
    // Its example secret is 24 bytes: the shortest we accept.
    expect(decodeSecret(vector.secret)).toHaveLength(MIN_SECRET_BYTES);
    expect(createSigner({ secrets: vector.secret }).sign(vector)).toBe(vector.signature);
  });

  it('signs the exact bytes: a Uint8Array body and its string give the same signature', () => {
    const signer = createSigner({ secrets: generateSecret() });
    const body = '{"amount":100,"note":"caf\u00e9"}';
    expect(signer.sign({ id: 'evt_1', timestamp: 1, body })).toBe(
      signer.sign({ id: 'evt_1', timestamp: 1, body: new TextEncoder().encode(body) }),
    );
    expect(signer.sign({ id: 'evt_1', timestamp: 1, body })).not.toBe(
      signer.sign({ id: 'evt_1', timestamp: 1, body: '{"amount": 100,"note":"caf\u00e9"}' }),
    );
  });

  it('gives one v1 entry per secret, in order, for rotation', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const input = { id: 'evt_2', timestamp: 1_700_000_000, body: '{}' };
    const both = createSigner({ secrets: [a, b] })
      .sign(input)
      .split(' ');
    expect(both).toEqual([
      createSigner({ secrets: a }).sign(input),
      createSigner({ secrets: b }).sign(input),
    ]);
  });

  it('builds the three headers', () => {
    const headers = createSigner({ secrets: vector.secret }).headers(vector);
    expect(headers).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': vector.signature,
    });
  });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const secret = generateSecret();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(decodeSecret(secret)).toHaveLength(32);
      seen.add(secret);
    }
    expect(seen.size).toBe(50);
  });

  it.each([
    ['whsec_', RangeError],
    ['whsec_c2hvcnQ=', RangeError],
    ['whsec_not base64!', TypeError],
  ])('refuses the secret %s', (secret, error) => {
    expect(() => createSigner({ secrets: secret })).toThrow(error);
  });

  it('refuses no secrets, bad timestamps and bad ids', () => {
    expect(() => createSigner({ secrets: [] })).toThrow(RangeError);
    const signer = createSigner({ secrets: generateSecret() });
    expect(() => signer.sign({ id: 'e', timestamp: 1.5, body: '' })).toThrow(RangeError);
    expect(() => signer.sign({ id: 'e', timestamp: -1, body: '' })).toThrow(RangeError);
    expect(() => signer.sign({ id: '', timestamp: 1, body: '' })).toThrow(TypeError);
  });

  it('is verified by standardwebhooks and svix, every secret of a rotation', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/\s/.test(s)),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.json(),
        (id, offset, json) => {
          const [a, b] = [generateSecret(), generateSecret()];
          const timestamp = Math.floor(Date.now() / 1000) - (offset % 200);
          const headers = createSigner({ secrets: [a, b] }).headers({ id, timestamp, body: json });
          for (const secret of [a, b]) {
            expect(new StandardWebhook(secret).verify(json, headers)).toEqual(JSON.parse(json));
            expect(
              new SvixWebhook(secret).verify(json, {
                'svix-id': id,
                'svix-timestamp': headers['webhook-timestamp'],
                'svix-signature': headers['webhook-signature'],
              }),
            ).toEqual(JSON.parse(json));
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
