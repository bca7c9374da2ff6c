export { decodeBase64, encodeBase64 } from './base64';
export { decodeSecret, generateSecret, MIN_SECRET_BYTES, SECRET_PREFIX } from './secret';
export { createSigner, type Signer, type SignerOptions, type SignInput, type WebhookHeaders } from './sign';
