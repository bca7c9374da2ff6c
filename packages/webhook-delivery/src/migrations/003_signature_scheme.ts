/**
 * Standard Webhooks `v1a` (https://www.standardwebhooks.com/): an endpoint signs with `v1` (HMAC-SHA256, a
 * `whsec_` secret, the default) or `v1a` (ed25519, a `whsk_` signing key in `secret`, its
 * `whpk_` public key shown in every response). Existing endpoints stay `v1`. Idempotent like 001.
 */
export const signatureScheme: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/003_signature_scheme',
  sql: `
alter table holdfast_webhook_endpoints add column if not exists signature_scheme text not null default 'v1'
  check (signature_scheme in ('v1', 'v1a'));
alter table holdfast_webhook_endpoints add column if not exists public_key text
  check ((signature_scheme = 'v1a') = (public_key is not null));
`,
};
