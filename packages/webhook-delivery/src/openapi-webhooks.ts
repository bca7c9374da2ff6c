import type { JsonObject } from '@holdfast/problem-details/openapi';
import { OpenAPIHono, z } from '@hono/zod-openapi';

/**
 * The three Standard Webhooks headers every delivery carries
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
 * as this package sends them: one id per event across retries, a timestamp per attempt, and a
 * signature per key.
 *
 * @example
 * ```ts
 * createRoute({ method: 'post', path: '/hooks/orders', request: { headers: webhookHeadersSchema }, responses });
 * ```
 */
export const webhookHeadersSchema: z.ZodObject<{
  'webhook-id': z.ZodString;
  'webhook-timestamp': z.ZodString;
  'webhook-signature': z.ZodString;
}> = z.object({
  'webhook-id': z.string().max(255).meta({
    description: 'The event id: the same on every retry and replay. Deduplicate on it.',
    example: 'evt_2x8Kd0qLw1Yc7VnR4sT9uA',
  }),
  'webhook-timestamp': z
    .string()
    .max(15)
    .regex(/^[0-9]+$/)
    .meta({
      description:
        'Unix seconds when this attempt was signed (each attempt is signed afresh). Refuse it when more than 5 minutes from your clock.',
      example: '1764028800',
    }),
  'webhook-signature': z.string().max(1000).meta({
    description:
      'Space-separated signatures of "webhook-id.webhook-timestamp.body" over the exact body bytes (Standard Webhooks): v1,<base64 HMAC-SHA256 with the endpoint secret, whsec_> for endpoints with signatureScheme v1; v1a,<base64 ed25519 signature, verified with the endpoint publicKey, whpk_> for v1a. For 24 h after a rotation the old key signs too: one entry per key. Accept the delivery when any entry verifies.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

/** One event type a service sends, for {@link declareWebhooks}. */
export interface OutboundWebhook {
  /** The event type, `order.created`: the key under `webhooks`. */
  readonly type: string;
  /** The payload's component name, `OrderCreatedEvent`; the operation is `webhook<name>`. */
  readonly name: string;
  /** What happened, one sentence. */
  readonly description: string;
  /** The payload's schema (give it `.meta({ id: name })` to make it a component). */
  readonly payload: z.ZodType;
}

/** Options of {@link declareWebhooks}. */
export interface DeclareWebhooksOptions {
  /** Tags of every webhook operation. Default `['Outbound webhooks']`. */
  readonly tags?: readonly string[];
  /** Appended to every operation's description, such as where receiving is documented. */
  readonly note?: string;
  /** The 200 response's description: how the sender reads the receiver's answer. */
  readonly response?: string;
}

const RESPONSE =
  'Any 2xx acknowledges the delivery: answer fast and process later. 408, 429, 5xx, a timeout (10 s) or a connection error is retried (1m, 5m, 30m, 2h, 6h, 24h, with jitter; Retry-After is honoured), then the delivery is dead. 410 disables the endpoint. Any other status, redirects included, makes the delivery dead at once.';

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Adds OpenAPI 3.1 `webhooks` to a finished document, one per event type with its payload and
 * the {@link webhookHeadersSchema}, and the payload schemas to its components. Schemas the
 * document already declares (built from the same zod objects) are kept as they are.
 *
 * @example
 * ```ts
 * declareWebhooks(document, [{ type: 'order.created', name: 'OrderCreatedEvent', description: 'An order was created.', payload }]);
 * ```
 */
export function declareWebhooks(
  document: JsonObject,
  webhooks: readonly OutboundWebhook[],
  options: DeclareWebhooksOptions = {},
): void {
  const { tags = ['Outbound webhooks'], note = '', response = RESPONSE } = options;
  const app = new OpenAPIHono();
  for (const { type, name, description, payload } of webhooks) {
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook${name}`,
      tags: [...tags],
      summary: `${type} (sent to your endpoint)`,
      description: `${description} POSTed to every active endpoint subscribed to ${type} or *, signed as the endpoint's signatureScheme says.${note}`,
      security: [],
      request: {
        headers: webhookHeadersSchema,
        body: { required: true, content: { 'application/json': { schema: payload } } },
      },
      responses: { 200: { description: response } },
    });
  }
  const generated: unknown = JSON.parse(
    JSON.stringify(app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'webhooks', version: '1' } })),
  );
  if (!isObject(generated)) return;
  document.webhooks = isObject(generated.webhooks) ? generated.webhooks : {};
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const more =
    isObject(generated.components) && isObject(generated.components.schemas)
      ? generated.components.schemas
      : {};
  for (const [name, schema] of Object.entries(more)) schemas[name] ??= schema;
  components.schemas = schemas;
  document.components = components;
}
