import { isObject, type Json, type JsonObject } from './json-value';
import { narrowContractCodes, type OperationTraits } from './openapi-problem-codes';
import { declareOutboundWebhooks } from './webhooks-openapi';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const header = (description: string, example: string): JsonObject => ({
  description,
  schema: { type: 'string', maxLength: 200 },
  example,
});

const REQUEST_ID = header(
  'Unique id of this request; also in problem bodies as requestId.',
  'req_Hq0v2Wm1x8YqTf3Kc9L2sA',
);
const RATE_LIMIT = header(
  'Remaining quota of this API key (IETF draft RateLimit header).',
  '"default";r=199;t=1',
);
const RATE_LIMIT_POLICY = header(
  'The quota policy of this API key: q is the burst, w the seconds an empty bucket takes to refill.',
  '"default";q=200;w=2',
);
const WWW_AUTHENTICATE: Record<string, JsonObject> = {
  '401': header(
    'RFC 6750 challenge; error="invalid_token" when a key was sent but is malformed or unknown.',
    'Bearer realm="holdfast", error="invalid_token"',
  ),
  '403': header(
    'RFC 6750 challenge naming the scope the key lacks.',
    'Bearer realm="holdfast", error="insufficient_scope", scope="orders:write"',
  ),
};
const RETRY_AFTER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 0, maximum: 86400 },
};

const IDEMPOTENT_REPLAYED = {
  description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key.',
  schema: { type: 'string', enum: ['true'] },
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  Orders: 'Orders, their lifecycle (pending, shipped, cancelled) and refunds.',
  Payments: 'Payments, idempotent by Idempotency-Key; some settle later (202).',
  'Payment methods': 'Descriptive card details; never a card number.',
  Subscriptions: 'Subscriptions and their lifecycle events.',
  'Webhook endpoints': 'Where signed webhooks are delivered; secrets are shown once.',
  Events: 'What happened, as delivered to webhook endpoints.',
  Deliveries: 'One delivery per (event, endpoint), its attempt log, dead letters and replay.',
  Notifications: 'What the account is told, such as an endpoint about to be disabled.',
  'Inbound events': 'Verified webhooks received at /hooks/{name}.',
  'Webhook receiver': 'The Standard Webhooks receiver.',
  Health: 'Liveness and readiness of the process, for orchestrators: no API key, no rate limit.',
};

function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [method, ...words].map((w, i) => (i === 0 ? w : w[0]?.toUpperCase() + w.slice(1))).join('');
}

/** Gives every integer schema a `format`: int32 when its declared range fits, else int64. */
function integerFormats(node: Json | undefined): void {
  if (Array.isArray(node)) {
    for (const item of node) integerFormats(item);
    return;
  }
  if (!isObject(node)) return;
  const integer = node.type === 'integer' || (Array.isArray(node.type) && node.type.includes('integer'));
  if (integer && node.format === undefined) {
    const fits = (v: Json | undefined) => typeof v === 'number' && Math.abs(v) <= 2 ** 31 - 1;
    node.format = fits(node.minimum) && fits(node.maximum) ? 'int32' : 'int64';
  }
  for (const value of Object.values(node)) integerFormats(value);
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required: boolean;
}

function parametersOf(op: JsonObject): Parameter[] {
  const list = Array.isArray(op.parameters) ? op.parameters : [];
  return list.filter(isObject).map((p) => ({
    name: String(p.name).toLowerCase(),
    in: String(p.in),
    required: p.required === true,
  }));
}

function traitsOf(path: string, op: JsonObject): OperationTraits {
  const parameters = parametersOf(op);
  const idempotency = parameters.find((p) => p.in === 'header' && p.name === 'idempotency-key');
  return {
    path,
    body: isObject(op.requestBody),
    list: parameters.some((p) => p.in === 'query' && p.name === 'cursor'),
    idempotent: idempotency !== undefined,
    idempotencyRequired: idempotency?.required === true,
  };
}

/**
 * Whether a response carries the `RateLimit` headers, as `src/rate-limit.ts` sends them: under
 * `/v1` every answer once the key authenticated (so never a 401); on the receiver, only what
 * follows a verified signature (200, a 400 about the verified body) and its 429.
 */
function rateLimited(path: string, status: string): boolean {
  if (path.startsWith('/v1/')) return status !== '401';
  if (path.startsWith('/hooks/')) return status === '200' || status === '400' || status === '429';
  return false;
}

/** Statuses an idempotent POST stores and replays: its successes and the 4xx its work decided. */
const REPLAYED = /^(2..|404|409|422)$/;

/**
 * Completes the generated OpenAPI document with what every operation shares, so no route has
 * to repeat it: `Request-Id` on every response; the `RateLimit` headers where they are sent
 * ({@link rateLimited}); `Retry-After` on 429 and 503 and on the 409 `idempotency_key_in_use`;
 * `Idempotent-Replayed` on what an idempotent POST replays; `WWW-Authenticate` on the API's
 * 401 and 403; each problem response's `code` as the closed set the operation answers; an
 * `operationId` where a route set none; and the tag list with descriptions.
 */
export function finalizeDocument(document: JsonObject): JsonObject {
  const paths = isObject(document.paths) ? document.paths : {};
  const tags = new Set<string>();
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      if (typeof op.operationId !== 'string') op.operationId = operationId(method, path);
      ids.add(String(op.operationId));
      if (Array.isArray(op.tags)) for (const tag of op.tags) if (typeof tag === 'string') tags.add(tag);
      const responses = isObject(op.responses) ? op.responses : {};
      const traits = traitsOf(path, op);
      for (const [status, response] of Object.entries(responses)) {
        if (!isObject(response)) continue;
        const headers = isObject(response.headers) ? response.headers : {};
        headers['Request-Id'] ??= REQUEST_ID;
        if (rateLimited(path, status)) {
          headers.RateLimit ??= RATE_LIMIT;
          headers['RateLimit-Policy'] ??= RATE_LIMIT_POLICY;
        }
        if (status === '429' || status === '503' || (status === '409' && traits.idempotent))
          headers['Retry-After'] ??= RETRY_AFTER;
        if (traits.idempotent && REPLAYED.test(status))
          headers['Idempotent-Replayed'] ??= IDEMPOTENT_REPLAYED;
        const challenge = path.startsWith('/v1/') ? WWW_AUTHENTICATE[status] : undefined;
        if (challenge) headers['WWW-Authenticate'] ??= challenge;
        response.headers = headers;
      }
      narrowContractCodes(responses, traits);
    }
  }
  // The receiver authenticates the sender by the Standard Webhooks signature, not an API key.
  const receive = isObject(paths['/hooks/{name}']) ? paths['/hooks/{name}'].post : undefined;
  if (isObject(receive)) receive.security = [{ webhookSignature: [] }];
  const components = isObject(document.components) ? document.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  schemes.webhookSignature = {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description:
      'Standard Webhooks: v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body"> with the receiver secret; webhook-id and webhook-timestamp headers are required too.',
  };
  components.securitySchemes = schemes;
  document.components = components;
  declareOutboundWebhooks(document);
  integerFormats(document);
  document.tags = [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  return document;
}
