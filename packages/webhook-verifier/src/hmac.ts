// The portable HMAC-SHA256: compact and synchronous, shared through @holdfast/webhook-keys and
// bundled in at build time.
export { hmacSha256 } from '@holdfast/webhook-keys/sha256';
