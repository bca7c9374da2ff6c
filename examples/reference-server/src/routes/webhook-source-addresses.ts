import { problemResponsesFor } from '@holdfast/problem-details/openapi';
import { readSourceAddresses, type SourceAddresses, SourceAddressesSchema } from '@holdfast/webhook-portal';
import { createRoute } from '@hono/zod-openapi';
import { json } from '../api/fields';
import type { App, Deps } from '../context';

const sourceAddresses = createRoute({
  method: 'get',
  path: '/webhook-source-addresses',
  tags: ['Webhooks'],
  security: [],
  summary: 'Addresses webhooks are sent from',
  description:
    'The published list of source addresses of webhook deliveries, for receivers that allowlist their senders. No API key and no per-key rate limit; cacheable for five minutes (`Cache-Control: public, max-age=300`). The list is kept stable: it changes only when the operator changes it, which notifies every account.',
  responses: {
    200: { description: 'The published list.', content: json(SourceAddressesSchema) },
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
