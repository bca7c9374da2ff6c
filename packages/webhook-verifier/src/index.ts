import { hmacSha256 } from './hmac';
import { type Verifier, type VerifierOptions, verifierFactory } from './verify';

export { decodeSecret, MIN_SECRET_BYTES } from './secret';
export {
  type HeadersInput,
  type JsonResult,
  type VerifiedWebhook,
  type Verifier,
  type VerifierOptions,
  type VerifyErrorCode,
  type VerifyFailure,
  type VerifyResult,
  WebhookVerificationError,
} from './verify';

/**
 * Builds a Standard Webhooks verifier (SPEC section 6, "Verification"): raw body, then an
 * all-digit timestamp within `toleranceSeconds` (400 `webhook_timestamp_out_of_window`), then
 * HMAC-SHA256 over `id.timestamp.` and the exact body bytes, compared (lengths, then constant
 * time) with every `v1,` entry under every secret (401 `webhook_signature_invalid`).
 * Secrets shorter than 24 bytes throw here, at start.
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ secrets: process.env.WEBHOOK_SECRET ?? '' });
 * const result = verifier.verify(request.headers, new Uint8Array(await request.arrayBuffer()));
 * if (!result.ok) return new Response(result.detail, { status: result.status });
 * const event = result.json();
 * ```
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(hmacSha256);
