import { problemResponsesFor } from '@holdfast/problem-details/openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { json } from '../api/fields';
import type { App, Deps } from '../context';
import { readSourceAddresses, type SourceAddresses } from '../source-addresses';

const SourceAddressList = z
  .object({
    addresses: z.array(z.string()).meta({
      description:
        'CIDR ranges webhooks are sent from: addresses this server binds as /32 (IPv4) or /128 (IPv6), or the ranges of its egress proxy as configured. Empty when nothing is configured.',
      example: ['203.0.113.7/32', '2001:db8::7/128'],
    }),
    configured: z.boolean().meta({
      description:
        'Whether the operator configured where webhooks leave from; `false` means the list is empty and an allowlist cannot be built from it.',
    }),
    updatedAt: z.string().meta({
      description:
        'When this list was first published (RFC 3339, UTC, milliseconds). It moves only when the list changes, and every account is notified then (`webhook_source_addresses_changed`).',
      example: '2026-11-27T10:00:00.000Z',
    }),
  })
  .meta({ id: 'WebhookSourceAddresses' });

const sourceAddresses = createRoute({
  method: 'get',
  path: '/webhook-source-addresses',
  tags: ['Webhooks'],
  security: [],
  summary: 'Addresses webhooks are sent from',
  description:
    'The published list of source addresses of webhook deliveries, for receivers that allowlist their senders. No API key and no per-key rate limit; cacheable for five minutes (`Cache-Control: public, max-age=300`). The list is kept stable: it changes only when the operator changes it, which notifies every account.',
  responses: {
    200: { description: 'The published list.', content: json(SourceAddressList) },
    ...problemResponsesFor()([503], {
      503: 'service_unavailable: the database does not answer (Retry-After).',
    }),
  },
});

/** How long a process serves the list it read before reading it again: it changes only at a start. */
const MEMO_MS = 10_000;

/**
 * `GET /webhook-source-addresses`: outside /v1, no key, no rate limit (a cheap read of one row,
 * remembered for a few seconds), cacheable.
 *
 * @example
 * ```ts
 * sourceAddressRoutes(app, deps);
 * ```
 */
export function sourceAddressRoutes(app: App, deps: Deps): void {
  let memo: { at: number; list: SourceAddresses } | undefined;
  app.openapi(sourceAddresses, async (c) => {
    const at = deps.now();
    if (!memo || at - memo.at > MEMO_MS || at < memo.at) {
      memo = { at, list: await readSourceAddresses(deps, deps.config, deps.now) };
    }
    c.header('Cache-Control', 'public, max-age=300');
    return c.json({ ...memo.list, addresses: [...memo.list.addresses] }, 200);
  });
}
