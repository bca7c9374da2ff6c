import { createVerifier, type HeadersInput } from '@holdfast/webhook-verifier';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createSigner, generateSecret, type WebhookHeaders } from '../src/index';

// Checked by the root typecheck (`tsc -p tsconfig.json` includes packages/*/test): the signer's
// headers must go to the verifier, and to any string record, with no cast.
describe('WebhookHeaders', () => {
  it('is assignable to the verifier’s HeadersInput and to a string record', () => {
    expectTypeOf<WebhookHeaders>().toExtend<HeadersInput>();
    expectTypeOf<WebhookHeaders>().toExtend<Record<string, string>>();
  });

  it('signed headers verify as they are, with no cast', () => {
    const secret = generateSecret();
    const body = '{"id":"evt_1"}';
    const headers = createSigner({ secrets: secret }).headers({
      id: 'evt_1',
      timestamp: 1_700_000_000,
      body,
    });
    const verifier = createVerifier({ secrets: secret, now: () => 1_700_000_000_000 });
    expect(verifier.verify(headers, body).ok).toBe(true);
  });
});
