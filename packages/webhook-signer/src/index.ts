import { ed25519Signing } from '#ed25519';
import { hmacSha256 } from '#hmac';
import { type KeyPair, keyPairFactory } from './key-pair';
import { type Signer, type SignerOptions, signerFactory } from './sign';

export type { KeyPair } from './key-pair';
export { generateSecret } from './keys';
export type { Signer, SignerOptions, SignInput, WebhookHeaders } from './sign';

/**
 * Builds a Standard Webhooks signer. The signed content is `id.timestamp.body` over the body's
 * exact bytes (https://www.standardwebhooks.com/, "Signature scheme"): HMAC-SHA256 for each
 * `whsec_` secret (`v1,` entries, byte-for-byte what `standardwebhooks` and `svix` verify),
 * ed25519 for each `whsk_` signing key (`v1a,` entries). Bad keys throw here, at start.
 *
 * @example
 * ```ts
 * const signer = createSigner({ secrets: [newSecret, oldSecret] });
 * const body = JSON.stringify(event);
 * await fetch(url, {
 *   method: 'POST',
 *   headers: { ...signer.headers({ id: event.id, timestamp: Math.floor(Date.now() / 1000), body }), 'content-type': 'application/json' },
 *   body,
 * });
 * ```
 */
export const createSigner: (options: SignerOptions) => Signer = signerFactory(hmacSha256, ed25519Signing);

const keys = keyPairFactory(ed25519Signing);

/**
 * A new `v1a` key pair from the platform CSPRNG: `{ secretKey: 'whsk_…', publicKey: 'whpk_…' }`.
 * Sign with the secret key; publish the public key to receivers.
 *
 * @example
 * ```ts
 * const { secretKey, publicKey } = generateKeyPair();
 * const signer = createSigner({ secrets: secretKey }); // signs v1a,<base64> entries
 * ```
 */
export const generateKeyPair: () => KeyPair = keys.generateKeyPair;

/**
 * The `whpk_` public key of a `whsk_` signing key, so only the signing key need be stored.
 *
 * @example
 * ```ts
 * publicKeyOf(generateKeyPair().secretKey); // 'whpk_…'
 * ```
 */
export const publicKeyOf: (secretKey: string) => string = keys.publicKeyOf;
