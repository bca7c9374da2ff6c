import { randomBytes } from 'node:crypto';

/**
 * A prefixed opaque id (CONTRACT section 1): `<prefix>_` and 128 bits from the CSPRNG in
 * base64url. Never sequential; clients treat it as a blob.
 */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}
