export { decodeBase64, decodeBase64Into, decodedLength, encodeBase64 } from './base64';
export {
  decodePublicKey,
  decodeSecret,
  ED25519_KEY_BYTES,
  ED25519_SPKI_PREFIX,
  generateSecret,
  MIN_SECRET_BYTES,
  PUBLIC_KEY_PREFIX,
  parseSigningKey,
  parseVerifyingKey,
  SECRET_PREFIX,
  SIGNING_KEY_PREFIX,
  type SigningKey,
  type VerifyingKey,
} from './keys';
export { signedContent } from './signed-content';
