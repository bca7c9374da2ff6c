import { opaqueId } from '@holdfast/opaque-id';
import { createSigner } from '@holdfast/webhook-signer';
import type postgres from 'postgres';
import { type Agent, request } from 'undici';
import { classifyAttempt, type Outcome, parseRetryAfter } from './classify';
import { DEFAULT_RETRY_SCHEDULE, retryDelay } from './schedule';
import { checkDestination, pinnedAgent, type Resolver } from './ssrf';
import { type Notification, toNotification } from './store';

/** Told about every notification the sender writes for an account, e.g. to send an email. */
export interface Notifier {
  notify(account: string, notification: Notification): void | Promise<void>;
}

export interface DeliveryWorkerOptions {
  sql: postgres.Sql;
  /** Retry delays in ms; n delays mean n + 1 attempts. @defaultValue 1m, 5m, 30m, 2h, 6h, 24h */
  schedule?: readonly number[];
  /** Attempt timeout, 5,000 to 10,000 ms (SPEC section 8). @defaultValue 10000 */
  timeoutMs?: number;
  /** Tests only: a timeout outside 5 to 10 s. */
  unsafeTimeoutMs?: number;
  /** In-flight attempts per endpoint across all workers. @defaultValue 4 */
  perEndpointConcurrency?: number;
  /** In-flight attempts of this worker. @defaultValue 32 */
  concurrency?: number;
  /** How long a lease outlives its attempt before another worker may take it over. @defaultValue timeout + 30 s */
  leaseMs?: number;
  /** Idle wait between polls. @defaultValue 250 */
  pollMs?: number;
  /** Local development and tests only: allow private and loopback destinations. */
  allowPrivateDestinations?: boolean;
  /** Production mode: https destinations only. */
  production?: boolean;
  resolve?: Resolver;
  /** Consecutive failing days before an endpoint is disabled. @defaultValue 5 */
  disableAfterDays?: number;
  notifier?: Notifier;
  now?: () => number;
  random?: () => number;
  /** Called with errors of the loop itself (the database is down, ...); it carries on. */
  onError?: (error: unknown) => void;
}

/** A delivery worker: any number may run, in any number of processes. */
export interface DeliveryWorker {
  /** Starts polling. */
  start(): void;
  /** Leases what is due now, attempts it, and resolves with how many were attempted. */
  runOnce(): Promise<number>;
  /** Stops leasing, lets in-flight attempts finish (each is bounded by the timeout), then resolves. */
  stop(): Promise<void>;
}

const DAY_MS = 86_400_000;
const BODY_PREFIX_BYTES = 1024;

/** A leased delivery with what its attempt needs, read in the lease statement itself. */
interface LeasedRow {
  id: string;
  account_id: string;
  event_id: string;
  endpoint_id: string;
  attempt_count: number;
  retry_base: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  payload: string;
}

/** What one attempt came to, waiting to be written with the rest of its batch. */
interface AttemptResult {
  row: LeasedRow;
  status: number | undefined;
  error: string | null;
  prefix: string | null;
  outcome: Outcome;
  nextStatus: 'succeeded' | 'failed' | 'dead';
  nextAttemptAt: Date | null;
  started: number;
  finished: number;
  done: () => void;
  failed: (error: unknown) => void;
}

/** Most results written by one statement; more wait for the next. */
const FLUSH_MAX = 256;
/** Most endpoints whose prepared signer is kept. */
const SIGNERS_MAX = 1000;

/**
 * Creates a worker that delivers due deliveries (SPEC section 6, "Delivery"): leased with
 * `FOR UPDATE SKIP LOCKED` and a lease expiry (a killed worker's leases are taken over),
 * at most `perEndpointConcurrency` in flight per endpoint across every worker (the lease
 * transaction locks the endpoint rows, then counts their live leases), each attempt signed afresh over the
 * event's exact bytes, sent to the address that passed the SSRF check, redirects never
 * followed, and logged with status, latency and the first 1 KiB of the answer.
 *
 * @example
 * ```ts
 * const worker = createDeliveryWorker({ sql, schedule: parseRetrySchedule('1s,2s') });
 * worker.start();
 * process.on('SIGTERM', () => worker.stop());
 * ```
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const timeoutMs = options.unsafeTimeoutMs ?? options.timeoutMs ?? 10_000;
  if (options.unsafeTimeoutMs === undefined && (timeoutMs < 5_000 || timeoutMs > 10_000)) {
    throw new RangeError('timeoutMs must be from 5000 to 10000 (SPEC section 8)');
  }
  const { sql } = options;
  const schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE;
  const perEndpoint = options.perEndpointConcurrency ?? 4;
  const concurrency = options.concurrency ?? 32;
  const leaseMs = options.leaseMs ?? timeoutMs + 30_000;
  const pollMs = options.pollMs ?? 250;
  const disableAfterMs = (options.disableAfterDays ?? 5) * DAY_MS;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const onError = options.onError ?? ((error: unknown) => console.error('webhook delivery worker:', error));
  const owner = opaqueId('wrk');
  const destination = {
    allowPrivateDestinations: options.allowPrivateDestinations ?? false,
    production: options.production ?? false,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  };
  const agent: Agent = pinnedAgent({ ...destination, connectTimeoutMs: timeoutMs });
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function lease(limit: number): Promise<LeasedRow[]> {
    const at = new Date(now());
    return sql.begin(async (tx): Promise<LeasedRow[]> => {
      // First lock the endpoints this round serves (skipping those another worker is leasing
      // for right now), then count their live leases in a second statement: under READ
      // COMMITTED it takes a fresh snapshot after the locks, so it sees every lease committed
      // by the worker that held a lock before us, and the bound holds across workers.
      const endpoints = await tx<{ id: string }[]>`
        select e.id from holdfast_webhook_endpoints e
        where e.status = 'active' and e.deleted_at is null
          and exists (
            select 1 from holdfast_deliveries d
            where d.endpoint_id = e.id and d.status in ('pending', 'failed') and d.next_attempt_at <= ${at}
              and (d.lease_expires_at is null or d.lease_expires_at < ${at}))
          -- Skip endpoints already at their bound (rechecked below, after the lock), so a
          -- saturated slow endpoint is not locked, and fought over, by every round.
          and (select count(*) from holdfast_deliveries l
               where l.endpoint_id = e.id and l.lease_expires_at >= ${at} and l.status in ('pending', 'failed')) < ${perEndpoint}
        order by random()
        limit ${limit}
        for update of e skip locked`;
      if (endpoints.length === 0) return [];
      const leased = await tx<LeasedRow[]>`
        with picked as (
          select p.id from unnest(${tx.array(endpoints.map((e) => e.id))}::text[]) as en (id)
          cross join lateral (
            select d.id from holdfast_deliveries d
            where d.endpoint_id = en.id and d.status in ('pending', 'failed') and d.next_attempt_at <= ${at}
              and (d.lease_expires_at is null or d.lease_expires_at < ${at})
            order by d.next_attempt_at, d.id
            limit greatest(0, ${perEndpoint} - (
              select count(*) from holdfast_deliveries l
              where l.endpoint_id = en.id and l.lease_expires_at >= ${at} and l.status in ('pending', 'failed')))
            for update skip locked
          ) p
          limit ${limit}
        )
        update holdfast_deliveries d set lease_owner = ${owner}, lease_expires_at = ${new Date(at.getTime() + leaseMs)}
        from picked, holdfast_webhook_endpoints e, holdfast_events ev
        where d.id = picked.id and e.id = d.endpoint_id and ev.id = d.event_id
        returning d.id, d.account_id, d.event_id, d.endpoint_id, d.attempt_count, d.retry_base,
          e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.payload`;
      return [...leased];
    });
  }

  async function notify(
    account: string,
    endpointId: string,
    type: string,
    message: string,
    disableAt: Date | null,
  ) {
    const [row] = await sql`
      insert into holdfast_notifications (id, account_id, type, endpoint_id, message, disable_at, created_at)
      values (${opaqueId('ntf')}, ${account}, ${type}, ${endpointId}, ${message}, ${disableAt}, ${new Date(now())})
      returning *`;
    if (row && options.notifier) await options.notifier.notify(account, toNotification(row));
  }

  /** Tracks the endpoint's failure streak: warn a day ahead, then disable (SPEC section 3). */
  async function recordEndpointHealth(row: LeasedRow, outcome: Outcome, url: string): Promise<void> {
    const at = now();
    // Success clears the streak in the batch's outcome statement (see flush()).
    if (outcome === 'succeeded') return;
    if (outcome === 'gone') {
      const [updated] = await sql`
        update holdfast_webhook_endpoints set status = 'disabled', disabled_reason = 'gone', updated_at = ${new Date(at)}
        where id = ${row.endpoint_id} and status = 'active' returning id`;
      if (updated) {
        await notify(
          row.account_id,
          row.endpoint_id,
          'webhook_endpoint.disabled',
          `Webhook endpoint ${row.endpoint_id} (${url}) answered 410 Gone and has been disabled. Re-enable it to resume deliveries.`,
          null,
        );
      }
      return;
    }
    const [endpoint] = await sql<{ failing_since: Date; disable_warned_at: Date | null }[]>`
      update holdfast_webhook_endpoints set failing_since = coalesce(failing_since, ${new Date(at)})
      where id = ${row.endpoint_id} and status = 'active'
      returning failing_since, disable_warned_at`;
    if (!endpoint) return;
    const since = endpoint.failing_since.getTime();
    const disableAt = new Date(Math.max(since + disableAfterMs, at + DAY_MS));
    if (!endpoint.disable_warned_at && at >= since + disableAfterMs - DAY_MS) {
      const [warned] = await sql`
        update holdfast_webhook_endpoints set disable_warned_at = ${new Date(at)}
        where id = ${row.endpoint_id} and disable_warned_at is null returning id`;
      if (warned) {
        await notify(
          row.account_id,
          row.endpoint_id,
          'webhook_endpoint.disabling',
          `Every delivery to webhook endpoint ${row.endpoint_id} (${url}) has failed since ${new Date(since).toISOString()}. It will be disabled at ${disableAt.toISOString()} unless a delivery succeeds.`,
          disableAt,
        );
      }
      return;
    }
    if (
      endpoint.disable_warned_at &&
      at >= since + disableAfterMs &&
      at >= endpoint.disable_warned_at.getTime() + DAY_MS
    ) {
      const [disabled] = await sql`
        update holdfast_webhook_endpoints set status = 'disabled', disabled_reason = 'failing', updated_at = ${new Date(at)}
        where id = ${row.endpoint_id} and status = 'active' returning id`;
      if (disabled) {
        await notify(
          row.account_id,
          row.endpoint_id,
          'webhook_endpoint.disabled',
          `Webhook endpoint ${row.endpoint_id} (${url}) was disabled after failing every delivery since ${new Date(since).toISOString()}.`,
          null,
        );
      }
    }
  }

  // Each endpoint's signer, prepared once (its HMAC keys decoded) and kept while its secrets
  // stay the same: every attempt is still signed afresh, with its own timestamp.
  const signers = new Map<string, { secrets: string; signer: ReturnType<typeof createSigner> }>();
  function signerFor(row: LeasedRow, at: number): ReturnType<typeof createSigner> {
    const secrets = [row.secret];
    if (
      row.previous_secret &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at.getTime() > at
    ) {
      secrets.push(row.previous_secret);
    }
    const key = secrets.join(' ');
    const cached = signers.get(row.endpoint_id);
    if (cached?.secrets === key) return cached.signer;
    const signer = createSigner({ secrets });
    signers.delete(row.endpoint_id);
    signers.set(row.endpoint_id, { secrets: key, signer });
    if (signers.size > SIGNERS_MAX) signers.delete(signers.keys().next().value as string);
    return signer;
  }

  // Outcomes are written in batches: every attempt row and delivery update of a batch in one
  // statement, the success side of endpoint health in the same one. An attempt's task ends
  // when its batch committed, so `stop()` still waits for every outcome to be written.
  const pending: AttemptResult[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> = Promise.resolve();

  function scheduleFlush(): void {
    if (pending.length >= FLUSH_MAX) {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = undefined;
      flushing = flushing.then(flush);
      return;
    }
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      flushing = flushing.then(flush);
    }, 2);
  }

  async function flush(): Promise<void> {
    const batch = pending.splice(0, FLUSH_MAX);
    if (batch.length === 0) return;
    if (pending.length > 0) scheduleFlush();
    const column = <T>(pick: (r: AttemptResult) => T) => batch.map(pick);
    try {
      await sql`
        with r as (
          select * from unnest(
            ${column((r) => r.row.id)}::text[],
            ${column(() => opaqueId('att'))}::text[],
            ${column((r) => r.row.account_id)}::text[],
            ${column((r) => r.row.endpoint_id)}::text[],
            ${column((r) => r.status ?? null)}::int[],
            ${column((r) => r.error)}::text[],
            ${column((r) => Math.max(0, Math.round(r.finished - r.started)))}::int[],
            ${column((r) => r.prefix)}::text[],
            ${column((r) => new Date(r.finished).toISOString())}::timestamptz[],
            ${column((r) => r.nextStatus)}::text[],
            ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[]
          ) as r (id, attempt_id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished,
                  next_status, next_attempt_at)
        ),
        attempts as (
          insert into holdfast_delivery_attempts
            (id, delivery_id, account_id, endpoint_id, status, error, latency_ms, response_body_prefix, created_at)
          select attempt_id, id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished from r
        ),
        healthy as (
          update holdfast_webhook_endpoints e set failing_since = null, disable_warned_at = null
          where e.failing_since is not null
            and e.id in (select endpoint_id from r where next_status = 'succeeded')
        )
        update holdfast_deliveries d set
          status = r.next_status,
          attempt_count = d.attempt_count + 1,
          next_attempt_at = r.next_attempt_at,
          last_attempt_at = r.finished,
          last_status = r.http_status,
          last_error = r.error,
          lease_owner = null, lease_expires_at = null,
          updated_at = r.finished
        from r where d.id = r.id and d.lease_owner = ${owner}`;
    } catch (error) {
      for (const result of batch) result.failed(error);
      return;
    }
    for (const result of batch) result.done();
  }

  async function attempt(row: LeasedRow): Promise<void> {
    const started = now();
    const headers = signerFor(row, started).headers({
      id: row.event_id,
      timestamp: Math.floor(started / 1000),
      body: row.payload,
    });
    const endpoint = { url: row.url };
    const event = { payload: row.payload };
    let status: number | undefined;
    let error: string | null = null;
    let prefix: string | null = null;
    let retryAfterMs: number | undefined;
    const check = await checkDestination(endpoint.url, destination);
    if (!check.ok) {
      error = `destination forbidden: ${check.reason}`;
    } else {
      try {
        const response = await request(check.url, {
          method: 'POST',
          dispatcher: agent,
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Holdfast-Webhooks/1.0' },
          body: event.payload,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: AbortSignal.timeout(timeoutMs),
        });
        status = response.statusCode;
        const retryAfter = response.headers['retry-after'];
        retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, now());
        const chunks: Uint8Array[] = [];
        let size = 0;
        try {
          for await (const chunk of response.body) {
            chunks.push(chunk);
            size += chunk.length;
            if (size >= BODY_PREFIX_BYTES) break;
          }
        } finally {
          response.body.destroy();
        }
        const bytes = new Uint8Array(Math.min(size, BODY_PREFIX_BYTES));
        let offset = 0;
        for (const chunk of chunks) {
          if (offset >= bytes.length) break;
          bytes.set(chunk.subarray(0, bytes.length - offset), offset);
          offset += chunk.length;
        }
        prefix = new TextDecoder('utf-8', { fatal: false }).decode(bytes).replaceAll('\u0000', '');
      } catch (cause) {
        const name = cause instanceof Error ? cause.name : '';
        error =
          name === 'TimeoutError' ||
          name === 'HeadersTimeoutError' ||
          name === 'BodyTimeoutError' ||
          name === 'AbortError'
            ? `timeout after ${timeoutMs} ms`
            : cause instanceof Error
              ? `${'code' in cause && typeof cause.code === 'string' ? `${cause.code}: ` : ''}${cause.message}`.slice(
                  0,
                  500,
                )
              : 'connection failed';
        status = undefined;
      }
    }
    const finished = now();
    const outcome: Outcome = error && status === undefined ? 'retry' : classifyAttempt(status);
    // A replay starts a fresh schedule (retry_base) while attempt_count keeps the total.
    const retry = row.attempt_count + 1 - row.retry_base;
    const delay = outcome === 'retry' ? retryDelay(schedule, retry, random, retryAfterMs) : undefined;
    const nextStatus =
      outcome === 'succeeded' ? 'succeeded' : outcome === 'retry' && delay !== undefined ? 'failed' : 'dead';
    await new Promise<void>((done, failed) => {
      pending.push({
        row,
        status,
        error,
        prefix,
        outcome,
        nextStatus,
        nextAttemptAt: delay === undefined ? null : new Date(finished + delay),
        started,
        finished,
        done,
        failed,
      });
      scheduleFlush();
    });
    if (outcome !== 'succeeded') await recordEndpointHealth(row, outcome, endpoint.url);
  }

  function launch(row: LeasedRow): void {
    const task: Promise<void> = attempt(row)
      .catch(async (error: unknown) => {
        onError(error);
        // Release the lease so another round (or worker) retries it promptly.
        await sql`update holdfast_deliveries set lease_owner = null, lease_expires_at = null
                  where id = ${row.id} and lease_owner = ${owner}`.catch(onError);
      })
      .finally(() => {
        inFlight.delete(task);
        wake?.();
      });
    inFlight.add(task);
  }

  async function runOnce(): Promise<number> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return 0;
    const rows = await lease(free);
    for (const row of rows) launch(row);
    return rows.length;
  }

  return {
    runOnce: async () => {
      const count = await runOnce();
      await Promise.all([...inFlight]);
      return count;
    },
    start() {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          let leased = 0;
          try {
            leased = await runOnce();
          } catch (error) {
            onError(error);
          }
          if (!running) break;
          if (leased > 0 && inFlight.size < concurrency) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      })();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      await Promise.all([...inFlight]);
      await flushing;
      await agent.close();
    },
  };
}

/**
 * Deletes delivered history older than `olderThanMs` (default 30 days) in small batches that
 * skip locked rows, so it never blocks delivery: attempts first, then events whose every
 * delivery is finished (their deliveries go with them).
 */
export async function purgeDeliveryHistory(
  sql: postgres.Sql,
  options: { olderThanMs?: number; batchSize?: number; now?: number } = {},
): Promise<number> {
  const before = new Date((options.now ?? Date.now()) - (options.olderThanMs ?? 30 * DAY_MS));
  const batch = options.batchSize ?? 500;
  let removed = 0;
  for (;;) {
    const rows = await sql`
      delete from holdfast_delivery_attempts where id in (
        select id from holdfast_delivery_attempts where created_at < ${before} limit ${batch} for update skip locked)
      returning id`;
    removed += rows.length;
    if (rows.length < batch) break;
  }
  for (;;) {
    const rows = await sql`
      delete from holdfast_events where id in (
        select e.id from holdfast_events e
        where e.created_at < ${before}
          and not exists (select 1 from holdfast_deliveries d where d.event_id = e.id and d.status in ('pending', 'failed'))
        limit ${batch} for update skip locked)
      returning id`;
    removed += rows.length;
    if (rows.length < batch) break;
  }
  return removed;
}
