import { specVector } from '@holdfast/webhook-keys/spec-vector';
import { createSigner, generateSecret, type WebhookHeaders } from '@holdfast/webhook-signer';
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { hmacSha256 as portableHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { createVerifier as portableCreateVerifier, WebhookVerificationError } from '../src/index';
import { createVerifier as v1CreateVerifier } from '../src/v1';
import { verifierFactory } from '../src/verify';

// The Standard Webhooks specification's example.
const vector = specVector;
const encoder = new TextEncoder();
// A type alias, not an interface: it is assignable to the header record type.
type PlainHeaders = { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
const plain = (h: WebhookHeaders): PlainHeaders => ({ ...h });

function headersOf(id: string, timestamp: number | string, signature: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

it('the portable entry point is the built-in SHA-256 build', () => {
  const verifier = portableCreateVerifier({ secrets: vector.secret, now: () => vector.timestamp * 1000 });
  expect(verifier.verify(headersOf(vector.id, vector.timestamp, vector.signature), vector.body).ok).toBe(
    true,
  );
});

describe.each([
  ['the built-in SHA-256 (portable build)', verifierFactory(portableHmac)],
  ['node:crypto (node build)', verifierFactory(nodeHmac)],
  ['the /v1 entry (portable build)', v1CreateVerifier],
])('createVerifier on %s', (_name, createVerifier) => {
  const at = (seconds: number) => () => seconds * 1000;

  it('verifies the Standard Webhooks example and returns the exact bytes', () => {
    const verifier = createVerifier({ secrets: vector.secret, now: at(vector.timestamp) });
    const result = verifier.verify(headersOf(vector.id, vector.timestamp, vector.signature), vector.body);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.id).toBe(vector.id);
    expect(result.timestamp).toBe(vector.timestamp);
    expect(result.body).toEqual(encoder.encode(vector.body));
    expect(result.json()).toEqual({ ok: true, value: { test: 2432232314 } });
  });

  it('reads Fetch Headers, Node header records in any case, and svix- headers', () => {
    const verifier = createVerifier({ secrets: vector.secret, now: at(vector.timestamp) });
    const h = headersOf(vector.id, vector.timestamp, vector.signature);
    expect(verifier.verify(new Headers(h), vector.body).ok).toBe(true);
    expect(
      verifier.verify(
        {
          'Webhook-Id': vector.id,
          'Webhook-Timestamp': String(vector.timestamp),
          'Webhook-Signature': [vector.signature],
        },
        vector.body,
      ).ok,
    ).toBe(true);
    expect(
      verifier.verify(
        {
          'svix-id': vector.id,
          'svix-timestamp': String(vector.timestamp),
          'svix-signature': vector.signature,
        },
        vector.body,
      ).ok,
    ).toBe(true);
  });

  it('refuses secrets shorter than 24 bytes, non-base64 secrets and an empty list when built', () => {
    const short = `whsec_${btoa('x'.repeat(23))}`;
    expect(() => createVerifier({ secrets: short })).toThrow(RangeError);
    expect(() => createVerifier({ secrets: [generateSecret(), short] })).toThrow(/secrets\[1\]/);
    expect(() => createVerifier({ secrets: 'whsec_not base64!' })).toThrow(TypeError);
    expect(() => createVerifier({ secrets: [] })).toThrow(RangeError);
    expect(() => createVerifier({ secrets: `whsec_${btoa('x'.repeat(24))}` })).not.toThrow();
    expect(() => createVerifier({ secrets: generateSecret(), toleranceSeconds: -1 })).toThrow(RangeError);
  });

  it('refuses a timestamp that is not all digits (400), not parsing it by prefix', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const signer = createSigner({ secrets: secret });
    for (const timestamp of [
      '1700000000xyz',
      ' 1700000000',
      '1700000000.0',
      '-1700000000',
      '1.7e9',
      '',
      '0x6553f100',
    ]) {
      const signature = signer.sign({ id: 'evt_1', timestamp: 1_700_000_000, body: '{}' });
      const result = verifier.verify(headersOf('evt_1', timestamp, signature), '{}');
      expect(result).toMatchObject({ ok: false, code: 'webhook_timestamp_out_of_window', status: 400 });
    }
  });

  it('answers missing or malformed headers with 400 or 401, never a throw', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const good = createSigner({ secrets: secret }).headers({
      id: 'evt_1',
      timestamp: 1_700_000_000,
      body: '{}',
    });
    const cases: [Record<string, string | string[]>, number][] = [
      [{}, 400],
      [{ ...good, 'webhook-timestamp': '' }, 400],
      [{ ...good, 'webhook-timestamp': ['1700000000', '1700000000'] }, 400],
      [
        { 'webhook-timestamp': good['webhook-timestamp'], 'webhook-signature': good['webhook-signature'] },
        401,
      ],
      [{ 'webhook-id': 'evt_1', 'webhook-timestamp': good['webhook-timestamp'] }, 401],
      [{ ...good, 'webhook-signature': 'v1,' }, 401],
      [{ ...good, 'webhook-signature': 'v1,not-base64-at-all!!' }, 401],
      [{ ...good, 'webhook-signature': 'v2,abc v1a,def garbage' }, 401],
      [{ ...good, 'webhook-signature': `v1,${btoa('short')}` }, 401],
      [{ ...good, 'webhook-signature': Array(20).fill(good['webhook-signature']).join(' ') }, 401],
    ];
    for (const [headers, status] of cases) {
      const result = verifier.verify(headers, '{}');
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.status).toBe(status);
    }
  });

  it('reads a signature header repeated in Fetch Headers (joined with ", ")', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const verifier = createVerifier({ secrets: a, now: at(1_700_000_000) });
    const input = { id: 'evt_1', timestamp: 1_700_000_000, body: '{}' };
    const headers = new Headers({ 'webhook-id': 'evt_1', 'webhook-timestamp': '1700000000' });
    headers.append('webhook-signature', createSigner({ secrets: a }).sign(input));
    headers.append('webhook-signature', createSigner({ secrets: b }).sign(input));
    expect(headers.get('webhook-signature')).toContain(', v1,');
    expect(verifier.verify(headers, '{}').ok).toBe(true);
  });

  it('ignores unknown schemes such as v1a next to a valid v1 entry', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const v1 = createSigner({ secrets: secret }).sign({ id: 'evt_1', timestamp: 1_700_000_000, body: '{}' });
    const signature = `v1a,${btoa('x'.repeat(64))} v2,zzz ${v1}`;
    expect(verifier.verify(headersOf('evt_1', 1_700_000_000, signature), '{}').ok).toBe(true);
  });

  it('verifies bodies that are not UTF-8 byte-exactly, and json() says so', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const body = new Uint8Array([0x7b, 0xff, 0xfe, 0x80, 0x00, 0xc3, 0x28, 0x7d]);
    const signature = createSigner({ secrets: secret }).sign({ id: 'evt_b', timestamp: 1_700_000_000, body });
    const result = verifier.verify(headersOf('evt_b', 1_700_000_000, signature), body);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.body).toEqual(body);
    expect(result.json()).toMatchObject({ ok: false, code: 'invalid_json', status: 400 });
    // The same bytes after a lossy string round trip no longer verify.
    const lossy = new TextDecoder().decode(body);
    expect(verifier.verify(headersOf('evt_b', 1_700_000_000, signature), lossy).ok).toBe(false);
  });

  it('verifies a body that is a view into a larger buffer (byteOffset respected)', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const backing = encoder.encode('XXXXXXXX{"a":1}YYYY');
    const view = backing.subarray(8, 15);
    const signature = createSigner({ secrets: secret }).sign({
      id: 'evt_v',
      timestamp: 1_700_000_000,
      body: '{"a":1}',
    });
    expect(verifier.verify(headersOf('evt_v', 1_700_000_000, signature), view).ok).toBe(true);
  });

  it('gives a typed error for a correctly signed body that is not JSON', () => {
    const secret = generateSecret();
    const verifier = createVerifier({ secrets: secret, now: at(1_700_000_000) });
    const signature = createSigner({ secrets: secret }).sign({
      id: 'evt_n',
      timestamp: 1_700_000_000,
      body: 'not json {',
    });
    const result = verifier.verify(headersOf('evt_n', 1_700_000_000, signature), 'not json {');
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.json()).toEqual({
        ok: false,
        code: 'invalid_json',
        status: 400,
        detail: 'The signed body is not JSON.',
      });
    }
  });

  it('verifyOrThrow throws a WebhookVerificationError with code and status', () => {
    const verifier = createVerifier({ secrets: generateSecret(), now: at(1_700_000_000) });
    expect(() => verifier.verifyOrThrow(headersOf('evt', 1_700_000_000, 'v1,AAAA'), '{}')).toThrow(
      WebhookVerificationError,
    );
    try {
      verifier.verifyOrThrow(headersOf('evt', 1, 'v1,AAAA'), '{}');
    } catch (error) {
      expect(error).toMatchObject({ code: 'webhook_timestamp_out_of_window', status: 400 });
    }
  });

  describe('interop', () => {
    const now = () => Math.floor(Date.now() / 1000);

    it.each([
      ['standardwebhooks', StandardWebhook],
      ['svix', SvixWebhook],
    ])('%s signatures verify with ours, and ours (via the signer) with theirs', (_lib, Lib) => {
      const secret = generateSecret();
      const theirs = new Lib(secret);
      const verifier = createVerifier({ secrets: secret });
      const body = JSON.stringify({ type: 'subscription.updated', note: 'caf\u00e9 \u{1f600}' });
      const ts = now();
      const signature = theirs.sign('evt_i', new Date(ts * 1000), body);
      expect(verifier.verify(headersOf('evt_i', ts, signature), body).ok).toBe(true);
      expect(verifier.verify(headersOf('evt_i', ts, signature), `${body} `).ok).toBe(false);
      const ours = plain(createSigner({ secrets: secret }).headers({ id: 'evt_o', timestamp: ts, body }));
      expect(theirs.verify(body, ours)).toEqual(JSON.parse(body));
    });

    it.each([
      ['standardwebhooks', StandardWebhook],
      ['svix', SvixWebhook],
    ])('multi-secret rotation with %s, in both directions', (_lib, Lib) => {
      const [oldSecret, newSecret, other] = [generateSecret(), generateSecret(), generateSecret()];
      const body = '{"rotation":true}';
      const ts = now();
      // Theirs signs one entry per secret; a sender mid-rotation sends both.
      const signature = [oldSecret, newSecret]
        .map((s) => new Lib(s).sign('evt_r', new Date(ts * 1000), body))
        .join(' ');
      expect(
        createVerifier({ secrets: [newSecret] }).verify(headersOf('evt_r', ts, signature), body).ok,
      ).toBe(true);
      expect(
        createVerifier({ secrets: [other, oldSecret] }).verify(headersOf('evt_r', ts, signature), body).ok,
      ).toBe(true);
      expect(createVerifier({ secrets: [other] }).verify(headersOf('evt_r', ts, signature), body).ok).toBe(
        false,
      );
      // A receiver on either secret, with their library, accepts our two-entry header.
      const ours = plain(
        createSigner({ secrets: [oldSecret, newSecret] }).headers({
          id: 'evt_r',
          timestamp: ts,
          body,
        }),
      );
      expect(new Lib(oldSecret).verify(body, ours)).toEqual({ rotation: true });
      expect(new Lib(newSecret).verify(body, ours)).toEqual({ rotation: true });
      expect(() => new Lib(other).verify(body, ours)).toThrow();
    });
  });

  describe('properties', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signer = createSigner({ secrets: secret });
    const T = 1_700_000_000;
    const verifier = createVerifier({ secrets: secret, now: at(T) });
    const idArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/);

    it('any single changed byte of id, timestamp, body or signature is rejected', () => {
      fc.assert(
        fc.property(
          idArb,
          fc.uint8Array({ maxLength: 300 }),
          fc.constantFrom('id', 'timestamp', 'body', 'signature'),
          fc.nat(),
          fc.integer({ min: 1, max: 255 }),
          (id, body, where, pos, delta) => {
            const h = plain(signer.headers({ id, timestamp: T, body }));
            expect(verifier.verify(h, body).ok).toBe(true);
            const flip = (bytes: Uint8Array): Uint8Array => {
              const copy = bytes.slice();
              const i = pos % copy.length;
              copy[i] = ((copy[i] ?? 0) + delta) & 255;
              return copy;
            };
            const flipText = (text: string): string => String.fromCharCode(...flip(encoder.encode(text)));
            if (where === 'body') {
              if (body.length === 0) return;
              expect(verifier.verify(h, flip(body)).ok).toBe(false);
            } else if (where === 'signature') {
              const raw = flip(
                Uint8Array.from(atob(h['webhook-signature'].slice(3)), (c) => c.charCodeAt(0)),
              );
              const changed = { ...h, 'webhook-signature': `v1,${btoa(String.fromCharCode(...raw))}` };
              expect(verifier.verify(changed, body)).toMatchObject({ ok: false, status: 401 });
            } else {
              const name = where === 'id' ? 'webhook-id' : 'webhook-timestamp';
              const changed = { ...h, [name]: flipText(h[name]) };
              expect(verifier.verify(changed, body).ok).toBe(false);
            }
          },
        ),
        { numRuns: 300 },
      );
    });

    it('timestamps inside the window on either side verify; one second outside gives 400', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 3600 }),
          fc.constantFrom(-1, 1),
          fc.integer({ min: 1, max: 600 }),
          (tol, side, past) => {
            const v = createVerifier({ secrets: secret, toleranceSeconds: tol, now: at(T) });
            const inside = T + side * tol;
            const outside = T + side * (tol + past);
            const okHeaders = plain(signer.headers({ id: 'evt', timestamp: inside, body: '{}' }));
            expect(v.verify(okHeaders, '{}').ok).toBe(true);
            const lateHeaders = plain(signer.headers({ id: 'evt', timestamp: outside, body: '{}' }));
            expect(v.verify(lateHeaders, '{}')).toMatchObject({
              ok: false,
              status: 400,
              code: 'webhook_timestamp_out_of_window',
            });
          },
        ),
        { numRuns: 200 },
      );
    });

    it('milliseconds of the clock do not widen the window', () => {
      const v = createVerifier({ secrets: secret, now: () => T * 1000 + 999 });
      expect(v.verify(plain(signer.headers({ id: 'e', timestamp: T - 300, body: '' })), '').ok).toBe(true);
      expect(v.verify(plain(signer.headers({ id: 'e', timestamp: T - 301, body: '' })), '').ok).toBe(false);
      expect(v.verify(plain(signer.headers({ id: 'e', timestamp: T + 300, body: '' })), '').ok).toBe(true);
      expect(v.verify(plain(signer.headers({ id: 'e', timestamp: T + 301, body: '' })), '').ok).toBe(false);
    });
  });
});

describe('the two HMAC builds', () => {
  it('property: node:crypto and the built-in SHA-256 give the same MAC for any key, prefix and body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 80 }),
        fc.string({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 2000 }),
        (key, prefix, body) => {
          expect(Array.from(nodeHmac(key)(prefix, body))).toEqual(
            Array.from(portableHmac(key)(prefix, body)),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a portable MAC object is reusable: the keyed state is copied, not consumed', () => {
    const mac = portableHmac(new Uint8Array(32).fill(1));
    const body = encoder.encode('same');
    expect(mac('a.1.', body)).toEqual(mac('a.1.', body));
  });
});
