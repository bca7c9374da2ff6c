import { tenantOf } from '@holdfast/api-keys';
import { clipEcho } from '@holdfast/problem-details';
import { applyRateLimitHeaders } from '@holdfast/rate-limit';
import { createVerifier } from '@holdfast/webhook-verifier';
import { webhookReceiver } from '@holdfast/webhook-verifier/hono';
import { createRoute, z } from '@hono/zod-openapi';
import { problemResponses } from '../api/problem-responses';
import type { App, AppEnv, Deps } from '../context';
import { serverInbox } from '../inbox';
import { PROBLEM_TYPE_BASE, problem } from '../problems';
import { clientAddress, type Limiter, limiterFor } from '../rate-limit';
import { parseReceiverSecrets } from '../receivers';

const receive = createRoute({
  method: 'post',
  path: '/hooks/{name}',
  tags: ['Webhook receiver'],
  summary: 'Receive a signed webhook',
  description:
    'Standard Webhooks receiver configured by HOLDFAST_RECEIVER_SECRETS. The raw body is verified (timestamp within 300 s, HMAC-SHA256 over id.timestamp.body with any of the receiver’s secrets, constant-time), deduplicated by Webhook-Id in PostgreSQL, stored in the inbox and acknowledged at once; processing happens in the background (GET /v1/inbound-events). Unknown event types are acknowledged too. A receiver with `sources` (CIDR ranges) accepts only those client addresses: any other is 403 webhook_source_forbidden before the body is read. No API key.',
  security: [],
  request: {
    params: z.object({
      name: z
        .string()
        .meta({ description: 'The receiver name.', example: 'billing', param: { name: 'name', in: 'path' } }),
    }),
    headers: z.object({
      'webhook-id': z.string().optional().meta({ description: 'Event id, the deduplication key.' }),
      'webhook-timestamp': z.string().optional().meta({ description: 'Unix seconds.' }),
      'webhook-signature': z
        .string()
        .optional()
        .meta({ description: 'Space-separated v1,<base64> entries.' }),
    }),
    body: {
      required: true,
      description: 'The event exactly as the sender signed it.',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
    },
  },
  responses: {
    200: {
      description: 'Verified and queued, or a duplicate of an event already received.',
      content: {
        'application/json': {
          schema: z
            .object({ received: z.literal(true), id: z.string(), duplicate: z.boolean() })
            .meta({ id: 'WebhookAcknowledgement' }),
        },
      },
    },
    ...problemResponses([400, 401, 403, 404, 413, 429], {
      400: 'webhook_timestamp_out_of_window, missing webhook headers, or validation_failed (a webhook-id over 255 characters).',
      401: 'webhook_signature_invalid.',
      403: 'webhook_source_forbidden: the client address is outside the receiver’s `sources` (answered before the body is read).',
      404: 'not_found: no receiver of this name.',
    }),
  },
});

/**
 * `POST /hooks/{name}`: the Standard Webhooks receiver (SPEC section 6, "Verification"), served
 * by `webhookReceiver` of `@holdfast/webhook-verifier/hono`. The toolkit reads the raw body (1 MiB
 * cap), refuses a `webhook-id` over 255 characters, verifies before anything in the body is read,
 * then hands the event to the durable inbox, which stores it and claims its id in one statement;
 * processing happens in the background (`startInboxProcessor`), never inline. This module only
 * wires the server's receivers, limits, problem documents and acknowledgement into it.
 *
 * @example
 * ```ts
 * hooksRoutes(app, deps); // outside /v1: no API key, raw body
 * ```
 */
export function hooksRoutes(app: App, deps: Deps, failures?: Limiter): void {
  const receivers = parseReceiverSecrets(deps.config.receiverSecrets);
  // A short or malformed secret fails the start, not the first delivery.
  for (const receiver of receivers.values()) createVerifier({ secrets: receiver.secrets });
  const inbox = serverInbox(deps.db);
  // Per receiver, counted only once a signature verified (CONTRACT section 10): badly signed
  // floods are limited per address before this, so they never spend a sender's quota, and
  // invented names never make a bucket.
  const limit = limiterFor(deps, 'receiver', deps.config.rateLimit);
  app.openAPIRegistry.registerPath(receive);
  app.post(
    '/hooks/:name',
    webhookReceiver<AppEnv>({
      secrets: (c) => receivers.get(c.req.param('name') ?? '')?.secrets,
      scope: (c) => c.req.param('name') ?? '',
      now: () => deps.now(),
      typeBase: PROBLEM_TYPE_BASE,
      // An address whose bad signatures spent its bucket is refused before any verification.
      beforeVerify: async (c) => {
        const address = clientAddress(c);
        if (failures && address) await failures.check(address);
      },
      onInvalid: async (c) => {
        const address = clientAddress(c);
        if (failures && address) await failures.spend(address);
      },
      // A receiver's `sources`: other client addresses are refused before the body is read, and
      // spend their address's token as a bad signature does.
      allowedSources: (c) => receivers.get(c.req.param('name') ?? '')?.sources,
      clientAddress: (c) => clientAddress(c),
      onSourceForbidden: async (_c, address) => {
        if (failures && address) await failures.spend(address);
      },
      onVerified: async (c) => {
        applyRateLimitHeaders(c, await limit.take(`hooks:${c.req.param('name')}`));
      },
      onEvent: (event, c) => {
        const name = c.req.param('name') ?? '';
        const receiver = receivers.get(name);
        if (!receiver) throw problem('not_found');
        return inbox.enqueue(event, { scope: name, tenant: tenantOf(receiver.account, receiver.mode) });
      },
      // Refusals go through the app's error handler: the same problem documents, request id and
      // headers as every other route.
      problem: (c, refusal) => {
        throw problem(refusal.code, {
          detail:
            refusal.code === 'not_found'
              ? `No webhook receiver is named "${clipEcho(c.req.param('name') ?? '')}".`
              : refusal.detail,
          ...(refusal.errors ? { errors: refusal.errors } : {}),
        });
      },
      acknowledge: (c, ack) =>
        c.json(
          { received: true as const, id: ack.receipt ?? ack.id, duplicate: ack.outcome === 'duplicate' },
          200,
        ),
    }),
  );
}
