// The portable HMAC-SHA256, shared with the other webhook package and bundled in at build time.
export { hmacSha256 } from '@holdfast/webhook-keys/hmac';
