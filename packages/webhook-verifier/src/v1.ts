import { hmacSha256 } from '#hmac';
import { type Verifier, type VerifierOptions, verifierFactory } from './verify-core';

/**
 * The Standard Webhooks verifier for `v1` (HMAC-SHA256) alone, and the smallest: no ed25519 code
 * at all, synchronous on every runtime. The same rules and results as `createVerifier` of the
 * main entry; a `whpk_` public key (`v1a`) throws a `TypeError` here: import the main entry.
 * Its types (`Verifier`, `VerifyResult`, ...) and `WebhookVerificationError` are the main
 * entry's: import them from `@holdfast/webhook-verifier` (types cost no bytes).
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ secrets: process.env.WEBHOOK_SECRET ?? '' });
 * const result = verifier.verify(request.headers, new Uint8Array(await request.arrayBuffer()));
 * if (!result.ok) return new Response(result.detail, { status: result.status });
 * ```
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(hmacSha256);
