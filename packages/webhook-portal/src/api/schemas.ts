import { defineSortAllowlist, type SortAllowlist, statusSorts } from '@holdfast/sort-allowlist';
import { checkFilter, FILTER_LIMITS } from '@holdfast/webhook-delivery';
import { z } from '@hono/zod-openapi';
import type { EventTypeScopes } from './event-types';

// Representations of the webhook resources and their sort allowlists: the single source for
// validation, responses and the OpenAPI document. Built once per map of event types, so a host
// that documents its own routes with the same components (Event, EventType) shares them.

/** RFC 3339 UTC with milliseconds, as every timestamp in a body. */
export const timestamp: z.ZodISODateTime = z.iso.datetime().meta({ example: '2026-11-22T16:30:19.123Z' });

/** Whether the data is live or test data. */
export const livemode: z.ZodBoolean = z
  .boolean()
  .meta({ description: 'true for live data (hf_live_ keys), false for test data (hf_test_ keys).' });

/** `{ 'application/json': { schema } }`, the content of a JSON body or response. */
export const json = <T>(schema: T): { 'application/json': { schema: T } } => ({
  'application/json': { schema },
});

/** An opaque id with the given prefix, for path parameters. */
export function idParam(
  prefix: string,
  description: string,
): z.ZodObject<{ id: z.ZodString }, z.core.$strip> {
  return z.object({
    id: z
      .string()
      .min(1)
      .max(255)
      .meta({ description, example: `${prefix}_2x8Kd0qLw1Yc7VnR4sT9uA`, param: { name: 'id', in: 'path' } }),
  });
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const;

/** An absolute URL (400 otherwise); whether it may be a destination is the SSRF check's (422). */
const destinationUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine((value) => {
    try {
      return new URL(value).protocol.length > 1;
    } catch {
      return false;
    }
  }, 'an absolute URL')
  .meta({ format: 'uri' });

const SIGNATURE_SCHEME = z.enum(['v1', 'v1a']).meta({
  description:
    'Standard Webhooks scheme of the deliveries: v1 signs with HMAC-SHA256 under a whsec_ secret (receivers hold the secret); v1a signs with ed25519 under a whsk_ key only the server holds (receivers verify with publicKey).',
});

const FILTER_RULES = `Matched against the event's JSON body (the Event shape: id, type, createdAt, sequence, data.object) when the event is recorded; an event that does not match creates no delivery for this endpoint. { "<dotted path>": <value> } is JSON equality (numbers by value, objects whatever their key order, arrays in order; no implicit array membership: index with a digit segment, data.object.items.0); { "<path>": { "$eq" | "$ne" | "$in" | "$nin" | "$gt" | "$gte" | "$lt" | "$lte" | "$exists": ... } } compares one path (several operators: all must hold); { "$and": [...] }, { "$or": [...] }, { "$not": {...} } combine. A missing path equals nothing, not even null, so $ne, $nin and $not match it; $exists is true for a null value. $gt, $gte, $lt, $lte compare a number with a number and a string with a string (by Unicode code point), anything else does not match. Several keys in one object must all match. At most ${FILTER_LIMITS.conditions} conditions and ${FILTER_LIMITS.bytes} bytes; else 400 validation_failed naming the place. Test events ignore the filter.`;

/** An endpoint's payload filter, checked by `@holdfast/webhook-delivery`'s rules on write. */
const FILTER = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    for (const issue of checkFilter(value))
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.detail });
  })
  .meta({
    id: 'EventFilter',
    description: FILTER_RULES,
    example: { type: 'order.created', 'data.object.total': { $gte: 10000 } },
  });
const ORDERING = z.enum(['none', 'per-resource']).meta({
  description:
    "per-resource: deliveries with the same ordering key (the id of the resource the event is about, data.object.id) are attempted one at a time, in the order their events were created; the next waits until the one before it succeeded or went dead (a dead one stops blocking its resource; replaying it later sends it after what is queued, out of order). Other resources are not held back; the events' sequence lets a receiver see a gap. none (default): deliveries are attempted side by side, in no order.",
});

/** The fields of a webhook endpoint as answered, with or without its secret. */
type EndpointShape = {
  id: z.ZodString;
  livemode: z.ZodBoolean;
  url: z.ZodString;
  description: z.ZodNullable<z.ZodString>;
  eventTypes: z.ZodArray<z.ZodString>;
  status: z.ZodEnum<{
    active: 'active';
    disabled: 'disabled';
  }>;
  maxPerSecond: z.ZodNullable<z.ZodNumber>;
  signatureScheme: z.ZodEnum<{
    v1: 'v1';
    v1a: 'v1a';
  }>;
  publicKey: z.ZodNullable<z.ZodString>;
  filter: z.ZodNullable<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  concurrency: z.ZodObject<
    {
      current: z.ZodNumber;
      max: z.ZodNumber;
    },
    z.core.$strip
  >;
  ordering: z.ZodEnum<{
    none: 'none';
    'per-resource': 'per-resource';
  }>;
  createdAt: z.ZodISODateTime;
  updatedAt: z.ZodISODateTime;
};

export const WebhookEndpointSchema: z.ZodObject<EndpointShape, z.core.$strip> = z
  .object({
    id: z.string().meta({ example: 'we_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    url: z.string().meta({ example: 'https://example.com/hooks/holdfast' }),
    description: z.string().nullable(),
    eventTypes: z.array(z.string()).meta({ description: 'Event types delivered; empty means every type.' }),
    status: z.enum(['active', 'disabled']),
    maxPerSecond: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Attempts started per second at most, across every worker; null for no limit.' }),
    signatureScheme: SIGNATURE_SCHEME,
    publicKey: z.string().max(60).nullable().meta({
      description:
        'v1a endpoints: the whpk_ ed25519 public key (base64 of 32 bytes) that verifies their v1a signatures; after a rotation, the new key (the old one keeps signing for 24 h). null for v1 endpoints.',
      example: 'whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
    }),
    filter: FILTER.nullable().meta({
      description:
        'The payload filter: only events it matches are delivered here; null for none (every event of the subscribed types).',
    }),
    concurrency: z
      .object({
        current: z.number().int().meta({ description: 'The adaptive in-flight limit the sender uses now.' }),
        max: z.number().int().meta({ description: 'The configured ceiling.' }),
      })
      .meta({
        description:
          'In-flight attempts: the limit falls on timeouts, 429, 502-504 and connection errors, waits out Retry-After, and climbs back while attempts succeed.',
      }),
    ordering: ORDERING,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema: z.ZodObject<
  EndpointShape & { secret: z.ZodOptional<z.ZodString> },
  z.core.$strip
> = WebhookEndpointSchema.extend({
  secret: z.string().optional().meta({
    description:
      'v1 endpoints: the whsec_ secret (base64 of 32 random bytes) receivers verify with, shown in this response only. Absent on v1a endpoints: their whsk_ signing key never leaves the server, and receivers verify with publicKey.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const AttemptSchema: z.ZodObject<
  {
    id: z.ZodString;
    delivery: z.ZodString;
    status: z.ZodNullable<z.ZodNumber>;
    error: z.ZodNullable<z.ZodString>;
    latencyMs: z.ZodNumber;
    responseBodyPrefix: z.ZodNullable<z.ZodString>;
    createdAt: z.ZodISODateTime;
  },
  z.core.$strip
> = z
  .object({
    id: z.string().meta({ example: 'att_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    delivery: z.string(),
    status: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The HTTP status, or null when none came back.' }),
    error: z.string().nullable(),
    latencyMs: z.number().int(),
    responseBodyPrefix: z.string().nullable().meta({ description: 'The first 1 KiB of the response body.' }),
    createdAt: timestamp,
  })
  .meta({ id: 'DeliveryAttempt' });

const createdAtSort = {
  createdAt: { column: 'created_at', type: 'timestamp' },
} as const;

export const deliverySort: SortAllowlist<'status' | 'createdAt'> = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
    status: { column: 'status', type: 'enum', rank: [...DELIVERY_STATUSES] },
  },
  id: { column: 'id' },
  default: '-createdAt',
  // Every order is served by an index (@holdfast/webhook-delivery's migrations): these exactly,
  // and any longer one through its prefix up to a fine-grained key. None is refused.
  indexed: statusSorts(['createdAt']),
});

export const endpointSort: SortAllowlist<'createdAt'> = defineSortAllowlist({
  fields: createdAtSort,
  id: { column: 'id' },
  default: '-createdAt',
});

/** The representations that name event types, built for one set of them. */
export interface EventTypeSchemas {
  readonly EventType: z.ZodEnum<{
    [x: string]: string;
  }>;
  readonly Event: z.ZodObject<
    {
      id: z.ZodString;
      livemode: z.ZodBoolean;
      type: z.ZodEnum<{
        [x: string]: string;
      }>;
      createdAt: z.ZodISODateTime;
      sequence: z.ZodNumber;
      test: z.ZodOptional<z.ZodLiteral<true>>;
      data: z.ZodObject<
        {
          object: z.ZodRecord<z.ZodString, z.ZodUnknown>;
        },
        z.core.$strip
      >;
    },
    z.core.$strip
  >;
  readonly Delivery: z.ZodObject<
    {
      id: z.ZodString;
      livemode: z.ZodBoolean;
      event: z.ZodString;
      eventType: z.ZodEnum<{
        [x: string]: string;
      }>;
      endpoint: z.ZodString;
      status: z.ZodEnum<{
        succeeded: 'succeeded';
        dead: 'dead';
        pending: 'pending';
        failed: 'failed';
      }>;
      attemptCount: z.ZodNumber;
      nextAttemptAt: z.ZodNullable<z.ZodISODateTime>;
      lastAttemptAt: z.ZodNullable<z.ZodISODateTime>;
      createdAt: z.ZodISODateTime;
      updatedAt: z.ZodISODateTime;
    },
    z.core.$strip
  >;
  readonly CreateWebhookEndpoint: z.ZodObject<
    {
      url: z.ZodString;
      eventTypes: z.ZodOptional<
        z.ZodArray<
          z.ZodEnum<{
            [x: string]: string;
          }>
        >
      >;
      description: z.ZodOptional<z.ZodString>;
      maxPerSecond: z.ZodOptional<z.ZodNumber>;
      signatureScheme: z.ZodOptional<
        z.ZodEnum<{
          v1: 'v1';
          v1a: 'v1a';
        }>
      >;
      filter: z.ZodOptional<z.ZodNullable<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
      ordering: z.ZodOptional<
        z.ZodEnum<{
          none: 'none';
          'per-resource': 'per-resource';
        }>
      >;
    },
    z.core.$strict
  >;
  readonly UpdateWebhookEndpoint: z.ZodObject<
    {
      url: z.ZodOptional<z.ZodString>;
      eventTypes: z.ZodOptional<
        z.ZodArray<
          z.ZodEnum<{
            [x: string]: string;
          }>
        >
      >;
      description: z.ZodOptional<z.ZodNullable<z.ZodString>>;
      status: z.ZodOptional<
        z.ZodEnum<{
          active: 'active';
          disabled: 'disabled';
        }>
      >;
      maxPerSecond: z.ZodOptional<z.ZodNullable<z.ZodNumber>>;
      filter: z.ZodOptional<z.ZodNullable<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
      ordering: z.ZodOptional<
        z.ZodEnum<{
          none: 'none';
          'per-resource': 'per-resource';
        }>
      >;
    },
    z.core.$strict
  >;
}

function build(types: [string, ...string[]]): EventTypeSchemas {
  const KNOWN_TYPES = types.join(', ');

  // An event type this server emits (a filter).
  const EVENT_TYPE = z
    .enum(types, { error: () => `not an event type this server emits (${KNOWN_TYPES})` })
    .meta({
      id: 'EventType',
      description:
        'An event type this server emits. New types are added without a new version: handle an unknown one by ignoring it.',
      example: 'subscription.created',
    });

  /** What an endpoint subscribes to: an event type, or `*` for every type. */
  const SUBSCRIBED_TYPE = z
    .enum([...types, '*'], { error: () => `not an event type this server emits (${KNOWN_TYPES}) nor *` })
    .meta({
      description: 'An event type this server emits, or * for every type.',
      example: 'subscription.created',
    });

  const CreateWebhookEndpointSchema = z
    .strictObject({
      url: destinationUrl.meta({
        description:
          'Where deliveries are POSTed. https only in production; loopback, private, link-local, CGNAT, multicast and similar destinations are refused with 422 destination_url_forbidden.',
      }),
      eventTypes: z.array(SUBSCRIBED_TYPE).max(100).optional(),
      description: z.string().max(500).optional(),
      maxPerSecond: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .optional()
        .meta({ description: 'Attempts started per second at most, across every worker. Absent: no limit.' }),
      signatureScheme: SIGNATURE_SCHEME.optional().meta({
        description: 'v1 (default) or v1a; fixed for the endpoint’s life.',
      }),
      filter: FILTER.nullable()
        .optional()
        .meta({ description: 'A payload filter; absent or null: every event.' }),
      ordering: ORDERING.optional().meta({ description: 'none (default) or per-resource.' }),
    })
    .meta({ id: 'CreateWebhookEndpoint' });

  const UpdateWebhookEndpointSchema = z
    .strictObject({
      url: destinationUrl.optional(),
      eventTypes: z.array(SUBSCRIBED_TYPE).max(100).optional(),
      description: z.string().max(500).nullable().optional(),
      status: z.enum(['active', 'disabled']).optional(),
      maxPerSecond: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .nullable()
        .optional()
        .meta({ description: 'A new rate ceiling, or null to lift it.' }),
      filter: FILTER.nullable()
        .optional()
        .meta({ description: 'A new payload filter, or null to remove it.' }),
      ordering: ORDERING.optional().meta({
        description:
          'none or per-resource. It applies to deliveries created from then on; those already queued keep the rule they were created under.',
      }),
    })
    .meta({ id: 'UpdateWebhookEndpoint' });

  const EventSchema = z
    .object({
      id: z.string().meta({ example: 'evt_2x8Kd0qLw1Yc7VnR4sT9uA' }),
      livemode,
      // The same enum as everywhere: adding an event type is additive (clients ignore types they
      // do not know, as the EventType description says); removing one is breaking.
      type: EVENT_TYPE,
      createdAt: timestamp,
      sequence: z
        .number()
        .int()
        .meta({ description: 'Rises monotonically per resource: discard lower ones.' }),
      test: z.literal(true).optional().meta({
        description:
          'Present (true) only on a test event (POST /v1/webhook-endpoints/{id}/test): its data.object is the documented example, its sequence 0.',
      }),
      data: z.object({
        object: z
          .record(z.string(), z.unknown())
          .meta({ description: 'The resource as it was after the change; carries updatedAt.' }),
      }),
    })
    .meta({ id: 'Event' });

  const DeliverySchema = z
    .object({
      id: z.string().meta({ example: 'dlv_2x8Kd0qLw1Yc7VnR4sT9uA' }),
      livemode,
      event: z.string().meta({ description: 'The event id; also the Webhook-Id header.' }),
      eventType: EVENT_TYPE,
      endpoint: z.string().meta({ description: 'The webhook endpoint id.' }),
      status: z.enum(DELIVERY_STATUSES).meta({
        description: 'pending, succeeded, failed (retrying) or dead (out of retries or refused).',
      }),
      attemptCount: z.number().int(),
      nextAttemptAt: timestamp.nullable().meta({
        description:
          'When it is attempted next; null once succeeded or dead, and while it waits behind an earlier delivery of its resource to an endpoint with ordering per-resource.',
      }),
      lastAttemptAt: timestamp.nullable(),
      createdAt: timestamp,
      updatedAt: timestamp,
    })
    .meta({ id: 'Delivery' });

  return {
    EventType: EVENT_TYPE,
    Event: EventSchema,
    Delivery: DeliverySchema,
    CreateWebhookEndpoint: CreateWebhookEndpointSchema,
    UpdateWebhookEndpoint: UpdateWebhookEndpointSchema,
  };
}

// Component ids are unique per process (zod's registry): one build per set of event types.
const built = new Map<string, EventTypeSchemas>();

/**
 * The schemas that name event types (`EventType`, `Event`, `Delivery` and the endpoint bodies)
 * for the types of `eventTypes`, built once per set of types: a host documenting its own routes
 * (an events list, say) with `Event` shares the component with the management API.
 *
 * @example
 * ```ts
 * const { Event } = webhookSchemas({ 'order.created': ['orders:read'] });
 * ```
 */
export function webhookSchemas(eventTypes: EventTypeScopes): EventTypeSchemas {
  const types = Object.keys(eventTypes);
  const [first, ...others] = types;
  if (first === undefined) throw new Error('eventTypes names no event type');
  const key = types.join('\n');
  let schemas = built.get(key);
  if (!schemas) {
    schemas = build([first, ...others]);
    built.set(key, schemas);
  }
  return schemas;
}
