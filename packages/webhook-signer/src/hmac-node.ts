// The Node build's HMAC-SHA256 (node:crypto); the tsup config swaps it in for `./hmac`.
export { hmacSha256 } from '@holdfast/webhook-keys/hmac-node';
