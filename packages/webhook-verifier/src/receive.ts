import type { DedupStore } from './dedup';
import type { VerifiedWebhook } from './verify';
import { type VersionStore, versionOf } from './versions';

/** A verified event, handed to background processing. */
export interface WebhookEvent {
  /** `webhook-id`: stable across retries and replays. */
  id: string;
  /** `webhook-timestamp` of this attempt, Unix seconds. */
  timestamp: number;
  /** The payload's `type` when it is a string. */
  type: string | undefined;
  /** The parsed body. Not validated: check its shape before use. */
  payload: unknown;
  /** The exact signed bytes. */
  body: Uint8Array;
}

/**
 * What a hand-off that deduplicates by itself reports: a durable inbox whose insert and id claim
 * are one statement (`postgresInbox`) says `duplicate: true` when the id was already recorded,
 * and may name what it stored (`receipt`), which the acknowledgement carries.
 */
export interface HandOff {
  duplicate: boolean;
  receipt?: string;
}

export interface ReceiverOptions<C = void> {
  /**
   * Hand-off to background processing: a queue's `enqueue`, or a database insert. A durable
   * inbox that claims the id itself resolves to a {@link HandOff}.
   */
  onEvent: (
    event: WebhookEvent,
    context: C,
  ) => Promise<HandOff | undefined | void> | HandOff | undefined | void;
  /** Deduplication by `webhook-id`; without it, every verified delivery is handed off. */
  dedup?: DedupStore;
  /**
   * How long ids stay recorded, in seconds. Default 7 days: longer than the sender's retry
   * schedule (1 m to 24 h, about 33 h in all) and far longer than the timestamp tolerance.
   */
  retentionSeconds?: number;
  /** Event types this receiver handles (a list or a test); any other is acknowledged with 200 and dropped. */
  types?: readonly string[] | ((type: string) => boolean);
  /**
   * Deepest nesting of arrays and objects accepted in the payload; deeper is 400
   * `validation_failed`. Default 64: a stack-bound consumer (`JSON.stringify`, a database's JSON
   * type) would otherwise fail on a payload it cannot hold.
   */
  maxDepth?: number;
  /** Stale-event discard: the store and how to read a resource and its version from an event. */
  versions?: {
    store: VersionStore;
    of: (event: WebhookEvent) => { resource: string; version: number | string | Date } | undefined;
  };
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

/** What the receiver did with a verified delivery; every one is a 2xx acknowledgement. */
export type Acknowledgement =
  | { ok: true; status: 204; outcome: 'accepted'; id: string; receipt?: string }
  | { ok: true; status: 200; outcome: 'duplicate' | 'stale' | 'unknown_type'; id: string; receipt?: string };

/** A verified delivery the receiver refuses: its signed body is not JSON, or nests too deep. */
export interface ReceiveFailure {
  ok: false;
  code: 'invalid_json' | 'validation_failed';
  status: 400;
  detail: string;
}

export interface Receiver<C = void> {
  /** Applies the receiver rules to a delivery whose signature verified. */
  handle(verified: VerifiedWebhook, context: C, scope?: string): Promise<Acknowledgement | ReceiveFailure>;
}

const DAY = 86_400;

/** True when `value` nests arrays and objects deeper than `limit`; iterative, so any depth is safe. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The receiver's rules after verification: parse the signed JSON (refusing
 * nesting deeper than `maxDepth`), acknowledge
 * unknown event types with 200, discard duplicates by `webhook-id` and stale events by version,
 * then hand the event off and acknowledge. If the hand-off throws, the id's claim is released
 * and the error propagates (a 5xx), so the sender's retry is processed.
 *
 * @example
 * ```ts
 * const receiver = createReceiver({ dedup: memoryDedupStore(), onEvent: (event) => queue.push(event) });
 * const verified = verifier.verify(request.headers, body);
 * if (!verified.ok) return new Response(null, { status: verified.status });
 * const ack = await receiver.handle(verified);
 * return new Response(null, { status: ack.status });
 * ```
 */
export function createReceiver<C = void>(options: ReceiverOptions<C>): Receiver<C> {
  const retention = options.retentionSeconds ?? 7 * DAY;
  if (!Number.isSafeInteger(retention) || retention <= 600) {
    throw new RangeError('retentionSeconds must be an integer above 600, well beyond the tolerance');
  }
  const now = options.now ?? Date.now;
  const maxDepth = options.maxDepth ?? 64;
  const types = options.types;
  const known =
    types === undefined
      ? undefined
      : typeof types === 'function'
        ? types
        : (type: string) => types.includes(type);
  return {
    async handle(verified, context, scope = '') {
      const parsed = verified.json();
      if (!parsed.ok) return parsed;
      const payload = parsed.value;
      if (nestedDeeperThan(payload, maxDepth)) {
        return {
          ok: false,
          code: 'validation_failed',
          status: 400,
          detail: `The event nests arrays and objects deeper than ${maxDepth} levels.`,
        };
      }
      const type =
        typeof payload === 'object' &&
        payload !== null &&
        'type' in payload &&
        typeof payload.type === 'string'
          ? payload.type
          : undefined;
      const { id } = verified;
      if (known && (type === undefined || !known(type))) {
        return { ok: true, status: 200, outcome: 'unknown_type', id };
      }
      const event: WebhookEvent = { id, timestamp: verified.timestamp, type, payload, body: verified.body };
      const key = scope === '' ? id : `${scope} ${id}`;
      if (options.dedup && !(await options.dedup.claim(key, now() + retention * 1000))) {
        return { ok: true, status: 200, outcome: 'duplicate', id };
      }
      try {
        if (options.versions) {
          const at = options.versions.of(event);
          if (
            at &&
            !(await options.versions.store.advance(`${scope} ${at.resource}`, versionOf(at.version)))
          ) {
            return { ok: true, status: 200, outcome: 'stale', id };
          }
        }
        const handOff = await options.onEvent(event, context);
        if (handOff) {
          const receipt = handOff.receipt === undefined ? {} : { receipt: handOff.receipt };
          if (handOff.duplicate) return { ok: true, status: 200, outcome: 'duplicate', id, ...receipt };
          return { ok: true, status: 204, outcome: 'accepted', id, ...receipt };
        }
      } catch (error) {
        await options.dedup?.release(key);
        throw error;
      }
      return { ok: true, status: 204, outcome: 'accepted', id };
    },
  };
}

/**
 * A queue in process memory that processes events after the response, `concurrency` at a
 * time. For demos and tests: events still queued are lost on exit; use a durable queue (a
 * table polled by a worker) in production.
 *
 * @example
 * ```ts
 * const queue = memoryQueue(async (event) => applyEvent(event), { onError: console.error });
 * const handle = webhookHandler({ secrets: () => [secret], onEvent: (event) => queue.enqueue(event) });
 * ```
 */
export function memoryQueue(
  process: (event: WebhookEvent) => Promise<void> | void,
  options: { concurrency?: number; onError?: (error: unknown, event: WebhookEvent) => void } = {},
): {
  /** Queues `event` and returns at once: the receiver's `onEvent`. */
  enqueue(event: WebhookEvent): void;
  /** Resolves once nothing is queued or running. */
  idle(): Promise<void>;
  /** Events queued or running. */
  readonly size: number;
} {
  const concurrency = options.concurrency ?? 1;
  const waiting: WebhookEvent[] = [];
  let running = 0;
  let idleWaiters: (() => void)[] = [];
  const pump = (): void => {
    while (running < concurrency && waiting.length > 0) {
      const event = waiting.shift();
      if (event === undefined) break;
      running += 1;
      Promise.resolve()
        .then(() => process(event))
        .catch((error: unknown) => options.onError?.(error, event))
        .finally(() => {
          running -= 1;
          pump();
        });
    }
    if (running === 0 && waiting.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };
  return {
    enqueue(event) {
      waiting.push(event);
      queueMicrotask(pump);
    },
    idle: () =>
      running === 0 && waiting.length === 0
        ? Promise.resolve()
        : new Promise((resolve) => idleWaiters.push(resolve)),
    get size() {
      return waiting.length + running;
    },
  };
}
