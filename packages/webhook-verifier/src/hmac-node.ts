// HMAC-SHA256 on node:crypto: what `#hmac` is under the `node` condition (Node, Deno, Bun).
export { hmacSha256 } from '@holdfast/webhook-keys/hmac-node';
