import { nestedDeeperThan, toWellFormedText } from '@holdfast/json-body';
import { opaqueId } from '@holdfast/opaque-id';
import { setRateLimitHeaders } from '@holdfast/rate-limit/hono';
import { createVerifier } from '@holdfast/webhook-verifier';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import { tenantOf } from '../auth';
import type { App, Deps } from '../context';
import { problem } from '../problems';
import { clientAddress, type Limiter, limiterFor } from '../rate-limit';
import { parseReceiverSecrets } from '../receivers';
import { problemResponses } from './webhook-openapi';

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_PAYLOAD_DEPTH = 64;

const receive = createRoute({
  method: 'post',
  path: '/hooks/{name}',
  tags: ['Webhook receiver'],
  summary: 'Receive a signed webhook',
  description:
    'Standard Webhooks receiver configured by HOLDFAST_RECEIVER_SECRETS. The raw body is verified (timestamp within 300 s, HMAC-SHA256 over id.timestamp.body with any of the receiver’s secrets, constant-time), deduplicated by Webhook-Id in PostgreSQL, stored in the inbox and acknowledged at once; processing happens in the background (GET /v1/inbound-events). Unknown event types are acknowledged too. No API key.',
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
    ...problemResponses([400, 401, 404, 413, 429], {
      400: 'webhook_timestamp_out_of_window, missing webhook headers, or validation_failed (a webhook-id over 255 characters).',
      401: 'webhook_signature_invalid.',
      404: 'not_found: no receiver of this name.',
    }),
  },
});

/** Reads the raw body, at most `MAX_BODY_BYTES` (413 past it), without ever parsing it. */
async function rawBody(request: Request): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw problem('payload_too_large');
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw problem('payload_too_large');
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Longest `webhook-id` stored (CONTRACT section 10): a longer one is 400, never stored. */
const MAX_WEBHOOK_ID = 255;

/**
 * The JSON view of a verified payload that PostgreSQL's jsonb can hold: U+0000 and lone
 * surrogates (valid JSON, refused by jsonb) become U+FFFD in keys and strings. The exact bytes
 * the sender signed are stored beside it, so nothing of an odd but genuine event is lost.
 */
function storableView(value: postgres.JSONValue): postgres.JSONValue {
  if (typeof value === 'string') return toWellFormedText(value).replaceAll('\u0000', '\uFFFD');
  if (Array.isArray(value)) return value.map(storableView);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, postgres.JSONValue> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, storableView(key) as string, {
        value: storableView(item as postgres.JSONValue),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** The `type` of a verified payload, if it has a usable one; anything else is stored as is. */
function eventTypeOf(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || !('type' in payload)) return null;
  const type = payload.type;
  return typeof type === 'string' && type.length > 0 && type.length <= 128 ? type : null;
}

/**
 * `POST /hooks/{name}`: the Standard Webhooks receiver (SPEC section 6, "Verification"). The
 * raw body is verified before anything in it is read; the event is then deduplicated by
 * Webhook-Id and stored in the inbox in one statement, and acknowledged at once: processing
 * happens in the background (`startInboxProcessor`), never inline.
 *
 * @example
 * ```ts
 * hooksRoutes(app, deps); // outside /v1: no API key, raw body
 * ```
 */
export function hooksRoutes(app: App, deps: Deps, failures?: Limiter): void {
  const receivers = parseReceiverSecrets(deps.config.receiverSecrets);
  const { sql } = deps;
  // One verifier per receiver, built at start: a short or malformed secret fails the start.
  const verifiers = new Map(
    [...receivers].map(([name, receiver]) => [
      name,
      createVerifier({ secrets: receiver.secrets, now: () => deps.now() }),
    ]),
  );
  // Per receiver, counted only once a signature verified (CONTRACT section 10): badly signed
  // floods are limited per address before this, so they never spend a sender's quota, and
  // invented names never make a bucket.
  const limit = limiterFor(deps, 'receiver', deps.config.rateLimit);
  app.openapi(receive, async (c) => {
    const { name } = c.req.valid('param');
    const receiver = receivers.get(name);
    const verifier = verifiers.get(name);
    if (!receiver || !verifier)
      throw problem('not_found', { detail: `No webhook receiver is named "${name}".` });
    const webhookId = c.req.header('webhook-id');
    if (webhookId !== undefined && webhookId.length > MAX_WEBHOOK_ID) {
      throw problem('validation_failed', {
        detail: `The webhook-id header is longer than ${MAX_WEBHOOK_ID} characters.`,
        errors: [{ field: 'webhook-id', code: 'too_long', detail: `At most ${MAX_WEBHOOK_ID} characters.` }],
      });
    }
    // An address whose bad signatures spent its bucket is refused before any verification.
    const address = clientAddress(c);
    if (failures && address) await failures.check(address);
    // SPEC section 6: the raw bytes first, verified before anything of the body is read.
    const body = await rawBody(c.req.raw);
    const verified = verifier.verify(c.req.raw.headers, body);
    if (!verified.ok) {
      if (failures && address) await failures.spend(address);
      throw problem(verified.code, { detail: verified.detail });
    }
    setRateLimitHeaders(c, await limit.take(`hooks:${name}`));
    const parsed = verified.json<postgres.JSONValue>();
    if (!parsed.ok) throw problem('invalid_json', { detail: parsed.detail });
    const payload = parsed.value;
    // Stored as jsonb through JSON.stringify, which a deep enough payload would overflow.
    if (nestedDeeperThan(payload, MAX_PAYLOAD_DEPTH)) {
      throw problem('validation_failed', {
        detail: `The event nests arrays and objects deeper than ${MAX_PAYLOAD_DEPTH} levels.`,
      });
    }
    const id = opaqueId('inb');
    const view = storableView(payload);
    const inserted = await sql<{ id: string }[]>`
      insert into holdfast_inbound_events (id, receiver, account_id, webhook_id, event_type, payload, raw_body)
      values (${id}, ${name}, ${tenantOf(receiver.account, receiver.mode)}, ${verified.id},
        ${eventTypeOf(view)}, ${sql.json(view)}, ${Buffer.from(body.buffer, body.byteOffset, body.byteLength)})
      on conflict (receiver, webhook_id) do nothing
      returning id`;
    if (inserted.length > 0) return c.json({ received: true as const, id, duplicate: false }, 200);
    const [existing] = await sql<{ id: string }[]>`
      select id from holdfast_inbound_events where receiver = ${name} and webhook_id = ${verified.id}`;
    return c.json({ received: true as const, id: existing?.id ?? id, duplicate: true }, 200);
  });
}
