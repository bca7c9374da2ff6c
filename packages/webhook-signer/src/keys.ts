// The key helpers come from @holdfast/webhook-keys, a private module bundled into this package
// (and into @holdfast/webhook-verifier) at build time; declared here so the published types
// stand alone.
import * as keys from '@holdfast/webhook-keys';

/**
 * A new secret: `whsec_` followed by base64 of 32 bytes from the platform CSPRNG. Show it once,
 * store it encrypted or as the only copy.
 *
 * @example
 * ```ts
 * const secret = generateSecret(); // 'whsec_q2q1vS0m...='
 * ```
 */
export const generateSecret: () => string = keys.generateSecret;
