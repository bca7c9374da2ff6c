import { hmacSha256 } from '#hmac';
import type { DedupStore } from './dedup';
import { readBodyCapped } from './read-body';
import { type Acknowledgement, createReceiver, type HandOff, type WebhookEvent } from './receive';
import { parseSourceRanges, type SourceRanges } from './source-ranges';
import { type Verifier, type VerifyFailure, verifierFactory } from './verify';
import type { VersionStore } from './versions';

const createVerifier = verifierFactory(hmacSha256);

/** A refusal the receiver answers with, before it is rendered as `application/problem+json`. */
export interface ReceiverProblem {
  code: keyof typeof TITLES;
  status: number;
  title: string;
  detail: string;
  /** Field errors, for `validation_failed`. */
  errors?: { field: string; code: string; detail: string }[];
}

/** A hook's answer: `undefined` to go on, or a `Response` to answer with instead (a 429, say). */
type HookResult = Response | undefined | void;

/**
 * Options of {@link webhookHandler} and of every door's `webhookReceiver`. `C` is what the hooks
 * are given: the door's request (Hono's `Context`, Express's `Request`, Fastify's
 * `FastifyRequest`) or, for a Fetch handler, the Fetch `Request`.
 */
export interface WebhookHandlerOptions<C> {
  /** The secrets of the receiver this request is for; `undefined` answers 404 `not_found`. */
  secrets: (c: C) => readonly string[] | undefined;
  /**
   * Hand-off to background processing; must be fast. Throwing answers 5xx (via `app.onError`).
   * A durable inbox that claims the id in its own insert (`postgresInbox`) resolves to a
   * {@link HandOff}, so the claim and the stored event are one statement.
   */
  onEvent: (event: WebhookEvent, c: C) => Promise<HandOff | undefined | void> | HandOff | undefined | void;
  /** Deduplication by `webhook-id`: duplicates are acknowledged without calling `onEvent`. */
  dedup?: DedupStore;
  /** Namespace of the dedup keys and versions. Default: the request path (one per receiver). */
  scope?: (c: C) => string;
  /** Seconds ids stay recorded. Default 7 days. */
  retentionSeconds?: number;
  /** Known event types (a list or a test); others are acknowledged with 200 and not handed off. */
  types?: readonly string[] | ((type: string) => boolean);
  /** Stale-event discard by `sequence` or `updatedAt` per resource. */
  versions?: {
    store: VersionStore;
    of: (event: WebhookEvent) => { resource: string; version: number | string | Date } | undefined;
  };
  /** Timestamp tolerance in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Largest body accepted, in bytes. Default 1 MiB; larger answers 413, and reading stops there. */
  maxBytes?: number;
  /**
   * Longest `webhook-id` accepted; longer answers 400 `validation_failed` before anything is
   * read. Default 255: ids are stored as deduplication keys, and Standard Webhooks ids are short.
   */
  maxIdLength?: number;
  /** Deepest payload nesting accepted; deeper answers 400 `validation_failed`. Default 64. */
  maxDepth?: number;
  /**
   * CIDR ranges (IPv4 and IPv6) deliveries may come from: the sender's published source
   * addresses. A request from any other client address, or whose address is unknown, answers
   * 403 `webhook_source_forbidden` before its body is read; an IPv4-mapped IPv6 client address
   * (`::ffff:203.0.113.9`) matches IPv4 ranges. A function gives the list per request (per
   * receiver); `undefined` from it, or no option, allows any address. A defence in depth: the
   * signature still decides.
   */
  allowedSources?: readonly string[] | ((c: C) => readonly string[] | undefined);
  /**
   * The client address the source check judges. The Hono, Express and Fastify doors default to
   * the connection's peer address; behind a reverse proxy, return the address your own proxy
   * saw (its `X-Forwarded-For` entry, trusted only on connections from that proxy). Required
   * with `allowedSources` for a Fetch handler: pass the platform's peer address (Deno's
   * `info.remoteAddr.hostname`, Bun's `server.requestIP(request)`).
   */
  clientAddress?: (c: C) => string | undefined;
  /**
   * Runs when the source check refuses a request, before the 403 answer: where such requests
   * spend the address's tokens, as bad signatures do in `onInvalid`.
   */
  onSourceForbidden?: (c: C, address: string | undefined) => void | Promise<void>;
  /**
   * Runs before the body is read or verified. Return a `Response` (or throw) to refuse: where a
   * per-address limiter turns away an address whose bad signatures spent its tokens.
   */
  beforeVerify?: (c: C) => HookResult | Promise<HookResult>;
  /** Runs when verification fails, before the 400/401 answer: where bad signatures spend a token. */
  onInvalid?: (c: C, failure: VerifyFailure) => void | Promise<void>;
  /**
   * Runs once the signature verified, before the event is handed off. Return a `Response` (or
   * throw) to refuse: where a per-receiver rate limit counts genuine deliveries only.
   */
  onVerified?: (c: C) => HookResult | Promise<HookResult>;
  /** Renders a refusal. Default: `application/problem+json` built from `typeBase` and `requestId`. */
  problem?: (c: C, problem: ReceiverProblem) => Response | Promise<Response>;
  /** Renders a 2xx acknowledgement. Default: 204 for an accepted event, 200 otherwise, no body. */
  acknowledge?: (c: C, ack: Acknowledgement) => Response | Promise<Response>;
  /** Base of problem `type` URIs: the service's own (`https://api.example.com/problems/`). Default relative `/problems/`. */
  typeBase?: string;
  /** The request id to put in problem documents, when the app has one. */
  requestId?: (c: C) => string | undefined;
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

const TITLES = {
  webhook_timestamp_out_of_window: 'Webhook timestamp out of window',
  webhook_signature_invalid: 'Webhook signature invalid',
  invalid_json: 'Invalid JSON',
  validation_failed: 'Validation failed',
  not_found: 'Not found',
  payload_too_large: 'Payload too large',
  webhook_source_forbidden: 'Webhook source forbidden',
} as const;

/**
 * The framework-neutral receiver every door runs: a Fetch `Request` in (and the door's `c` for
 * the hooks), a Fetch `Response` out. It receives Standard Webhooks (https://www.standardwebhooks.com/): reads the
 * raw body (at most `maxBytes`), verifies it against the secrets `secrets(c)` gives,
 * acknowledges duplicates, stale events and unknown types with 200 and accepted events with 204
 * after `onEvent` hands them off. Failures are `application/problem+json`: 400
 * `webhook_timestamp_out_of_window`, 401 `webhook_signature_invalid`, 400 `invalid_json`, 400
 * `validation_failed` (a `webhook-id` over `maxIdLength`, a payload nested over `maxDepth`),
 * 404 `not_found`, 413 `payload_too_large`, 403 `webhook_source_forbidden` (a client address
 * outside `allowedSources`, refused before the body is read). Hooks let the app limit per
 * address before verification and per receiver after it, and render answers its own way.
 *
 * @example
 * ```ts
 * const receive = webhookHandler<Request>({ secrets: () => [secret], onEvent: (event) => queue.enqueue(event) });
 * export const POST = (request: Request) => receive(request, request);
 * ```
 */
export function webhookHandler<C>(
  options: WebhookHandlerOptions<C>,
): (request: Request, c: C) => Promise<Response> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const maxIdLength = options.maxIdLength ?? 255;
  const typeBase = options.typeBase ?? '/problems/';
  const verifiers = new Map<string, Verifier>();
  const receiver = createReceiver<C>({
    onEvent: options.onEvent,
    ...(options.dedup ? { dedup: options.dedup } : {}),
    ...(options.retentionSeconds !== undefined ? { retentionSeconds: options.retentionSeconds } : {}),
    ...(options.types ? { types: options.types } : {}),
    ...(options.versions ? { versions: options.versions } : {}),
    ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
    ...(options.now ? { now: options.now } : {}),
  });

  const defaultProblem = (request: Request, c: C, refusal: ReceiverProblem): Response => {
    const requestId = options.requestId?.(c);
    const document = {
      type: typeBase + refusal.code,
      title: refusal.title,
      status: refusal.status,
      detail: refusal.detail,
      instance: new URL(request.url).pathname,
      code: refusal.code,
      ...(refusal.errors ? { errors: refusal.errors } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
    };
    return new Response(JSON.stringify(document), {
      status: refusal.status,
      headers: { 'content-type': 'application/problem+json' },
    });
  };
  const fixedSources =
    options.allowedSources === undefined || typeof options.allowedSources === 'function'
      ? undefined
      : parseSourceRanges(options.allowedSources);
  const sourceLists = new Map<string, SourceRanges>();
  // A per-request list is parsed once per distinct list (a bad entry throws: a 5xx, as a bad secret).
  const sourcesFor = (c: C): SourceRanges | undefined => {
    const given = options.allowedSources;
    if (typeof given !== 'function') return fixedSources;
    const list = given(c);
    if (list === undefined) return undefined;
    const cacheKey = list.join(',');
    let ranges = sourceLists.get(cacheKey);
    if (!ranges) {
      ranges = parseSourceRanges(list);
      if (sourceLists.size >= 256) sourceLists.clear();
      sourceLists.set(cacheKey, ranges);
    }
    return ranges;
  };
  const verifierFor = (secrets: readonly string[]): Verifier => {
    const cacheKey = secrets.join('\n');
    let verifier = verifiers.get(cacheKey);
    if (!verifier) {
      verifier = createVerifier({
        secrets,
        ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
      // Secrets change rarely; a bound keeps a rotation-happy config from growing the cache.
      if (verifiers.size >= 256) verifiers.clear();
      verifiers.set(cacheKey, verifier);
    }
    return verifier;
  };

  return async (request, c) => {
    const problem = (
      code: keyof typeof TITLES,
      status: number,
      detail: string,
      errors?: ReceiverProblem['errors'],
    ): Response | Promise<Response> => {
      const refusal = { code, status, title: TITLES[code], detail, ...(errors ? { errors } : {}) };
      return options.problem ? options.problem(c, refusal) : defaultProblem(request, c, refusal);
    };
    const secrets = options.secrets(c);
    if (secrets === undefined || secrets.length === 0) {
      return problem('not_found', 404, 'No webhook receiver is configured here.');
    }
    const webhookId = request.headers.get('webhook-id') ?? undefined;
    if (webhookId !== undefined && webhookId.length > maxIdLength) {
      return problem(
        'validation_failed',
        400,
        `The webhook-id header is longer than ${maxIdLength} characters.`,
        [{ field: 'webhook-id', code: 'too_long', detail: `At most ${maxIdLength} characters.` }],
      );
    }
    const refused = await options.beforeVerify?.(c);
    if (refused) return refused;
    // The sender's published addresses only, judged before a byte of the body is read.
    const sources = sourcesFor(c);
    if (sources) {
      const address = options.clientAddress?.(c);
      if (!sources.allows(address)) {
        await options.onSourceForbidden?.(c, address);
        return problem(
          'webhook_source_forbidden',
          403,
          address === undefined
            ? 'The client address could not be determined, and this receiver accepts only its allowed source ranges.'
            : 'The client address is not in the source ranges this receiver accepts.',
        );
      }
    }
    // Step 1: the raw bytes, never a parsed and re-serialised body; a chunked body is cut off
    // at the cap instead of being buffered whole.
    const body = await readBodyCapped(request, maxBytes);
    if (body === undefined) {
      return problem('payload_too_large', 413, `The body exceeds ${maxBytes} bytes.`);
    }
    // Asynchronous: v1a on WebCrypto (Workers, browsers) verifies only so.
    const verified = await verifierFor(secrets).verifyAsync(request.headers, body);
    if (!verified.ok) {
      await options.onInvalid?.(c, verified);
      return problem(verified.code, verified.status, verified.detail);
    }
    const limited = await options.onVerified?.(c);
    if (limited) return limited;
    const outcome = await receiver.handle(
      verified,
      c,
      options.scope ? options.scope(c) : new URL(request.url).pathname,
    );
    if (!outcome.ok) return problem(outcome.code, outcome.status, outcome.detail);
    if (options.acknowledge) return options.acknowledge(c, outcome);
    return new Response(null, { status: outcome.status === 204 ? 204 : 200 });
  };
}
