import { hmacSha256 } from '#hmac';
import { type Verifier, type VerifierOptions, verifierFactory } from './verify';

export {
  type HeadersInput,
  type VerifiedWebhook,
  type Verifier,
  type VerifierOptions,
  type VerifyFailure,
  type VerifyResult,
  WebhookVerificationError,
} from './verify';

/**
 * Builds a Standard Webhooks verifier (https://www.standardwebhooks.com/, "Verifying
 * webhooks"): raw body, then an all-digit timestamp within `toleranceSeconds` (400
 * `webhook_timestamp_out_of_window`), then the signed content `id.timestamp.` and the exact body
 * bytes against every entry of a scheme it holds keys for (401 `webhook_signature_invalid`):
 * `v1,` entries by HMAC-SHA256 under each `whsec_` secret (lengths, then constant time), `v1a,`
 * entries by ed25519 under each `whpk_` public key. Secrets shorter than 24 bytes, public keys
 * that are not 32 bytes and `whsk_` signing keys throw here, at start.
 *
 * `verify` is synchronous; `verifyAsync` verifies `v1a` on every runtime (WebCrypto's Ed25519
 * is asynchronous: on Workers and in browsers, `verify` throws for a verifier holding a `whpk_`
 * key). For `v1` alone, `@holdfast/webhook-verifier/v1` is the same verifier without ed25519.
 *
 * @example
 * ```ts
 * // A whsec_ secret (v1), a whpk_ public key (v1a), or both during a move from one to the other.
 * const verifier = createVerifier({ secrets: process.env.WEBHOOK_SECRET ?? '' });
 * const result = await verifier.verifyAsync(request.headers, new Uint8Array(await request.arrayBuffer()));
 * if (!result.ok) return new Response(result.detail, { status: result.status });
 * const event = result.json();
 * ```
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(hmacSha256);
