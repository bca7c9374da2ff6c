import { decodePublicKey } from '@holdfast/webhook-keys';
import { ed25519Verify } from '#ed25519';
import {
  type Ed25519Verify,
  type HmacSha256,
  type Verifier,
  type VerifierOptions,
  verifierFactory as v1Factory,
} from './verify-core';

export {
  type HeadersInput,
  type VerifiedWebhook,
  type Verifier,
  type VerifierOptions,
  type VerifyFailure,
  type VerifyResult,
  WebhookVerificationError,
} from './verify-core';

/**
 * Binds `createVerifier` to its crypto, `v1` and `v1a`. Internal: the package entry points
 * export it applied to the portable HMAC and WebCrypto, or to `node:crypto` (Node); the ed25519
 * default is what `#ed25519` resolves to on this runtime.
 */
export function verifierFactory(
  hmacSha256: HmacSha256,
  ed25519: Ed25519Verify = ed25519Verify,
): (options: VerifierOptions) => Verifier {
  return v1Factory(hmacSha256, (key, parameter) => ed25519(decodePublicKey(key, parameter)));
}
