import { type HealthContext, recordFailure } from './health';
import { type AttemptResult, writeOutcomes } from './outcomes';
import type { QueueDb } from './sql/worker';

/** What `onAttempt` is told after every attempt, once its outcome is written. */
export interface AttemptInfo {
  deliveryId: string;
  endpointId: string;
  eventType: string;
  /** HTTP status, or `null` for a timeout, a connection error or a forbidden destination. */
  status: number | null;
  /** `retry`: it will be attempted again; `disabled`: 410 Gone disabled the endpoint. */
  outcome: 'succeeded' | 'retry' | 'dead' | 'disabled';
  latencyMs: number;
  error?: string;
}

/** Most results written by one statement; more wait for the next. */
const FLUSH_MAX = 512;

const INFO_OUTCOME: Record<AttemptResult['nextStatus'], AttemptInfo['outcome']> = {
  succeeded: 'succeeded',
  failed: 'retry',
  dead: 'dead',
};

export interface OutcomeWriterOptions {
  queue: QueueDb;
  owner: string;
  stripe: number;
  perEndpoint: number;
  health: HealthContext;
  onError: (error: unknown) => void;
  onAttempt: ((info: AttemptInfo) => void) | undefined;
}

interface Pending {
  result: AttemptResult;
  done: () => void;
  failed: (error: unknown) => void;
}

/**
 * Writes attempts' outcomes in batches (one `writeOutcomes` statement each): results that come
 * within a millisecond of each other share a statement, overload news is written at once. A
 * result's promise settles once its batch committed and the failure side of endpoint health ran,
 * so a worker's `stop()` still waits for every outcome.
 *
 * @example
 * ```ts
 * const writer = new OutcomeWriter({ queue, owner, stripe, perEndpoint: 4, health, onError, onAttempt });
 * await writer.write(result, false);
 * await writer.drain();
 * ```
 */
export class OutcomeWriter {
  readonly #options: OutcomeWriterOptions;
  readonly #pending: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  readonly #settling = new Set<Promise<void>>();
  /** Fast successes whose increase found the pacing row locked (see `writeOutcomes`). */
  readonly #carry = new Map<string, number>();

  constructor(options: OutcomeWriterOptions) {
    this.#options = options;
  }

  /** Queues one result; `urgent` writes its batch now. Resolves once it is written. */
  write(result: AttemptResult, urgent: boolean): Promise<void> {
    return new Promise<void>((done, failed) => {
      this.#pending.push({ result, done, failed });
      this.#schedule(urgent);
    });
  }

  /** Resolves once everything queued so far is written and settled. */
  async drain(): Promise<void> {
    await this.#flushing;
    await Promise.all([...this.#settling]);
  }

  #schedule(urgent: boolean): void {
    if (this.#pending.length >= FLUSH_MAX || urgent) {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#flushing = this.#flushing.then(() => this.#flush());
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flushing.then(() => this.#flush());
    }, 1);
  }

  async #flush(): Promise<void> {
    const batch = this.#pending.splice(0, FLUSH_MAX);
    if (batch.length === 0) return;
    if (this.#pending.length > 0) this.#schedule(false);
    const { queue, owner, stripe, perEndpoint } = this.#options;
    try {
      await writeOutcomes(queue, {
        owner,
        stripe,
        perEndpoint,
        batch: batch.map((b) => b.result),
        carry: this.#carry,
      });
    } catch (error) {
      for (const entry of batch) entry.failed(error);
      return;
    }
    // The rest runs beside the next flushes, not in their chain: a failing endpoint's health
    // statements must not hold up every other endpoint's outcomes.
    const task = this.#settle(batch).finally(() => this.#settling.delete(task));
    this.#settling.add(task);
  }

  async #settle(batch: readonly Pending[]): Promise<void> {
    // The failure side of endpoint health, once per endpoint and kind of failure in the batch,
    // before the attempts' tasks end (so `runOnce` and `stop` see it done).
    const failures = new Map<string, AttemptResult>();
    for (const { result } of batch) {
      if (result.outcome !== 'succeeded') failures.set(`${result.row.endpoint_id} ${result.outcome}`, result);
    }
    for (const result of failures.values()) {
      await recordFailure(this.#options.health, {
        account: result.row.account_id,
        endpointId: result.row.endpoint_id,
        url: result.row.url,
        outcome: result.outcome,
      }).catch(this.#options.onError);
    }
    for (const entry of batch) entry.done();
    for (const { result } of batch) this.#report(result);
  }

  #report(result: AttemptResult): void {
    const { onAttempt, onError } = this.#options;
    if (!onAttempt) return;
    try {
      onAttempt({
        deliveryId: result.row.id,
        endpointId: result.row.endpoint_id,
        eventType: result.row.event_type,
        status: result.status ?? null,
        outcome: result.outcome === 'gone' ? 'disabled' : INFO_OUTCOME[result.nextStatus],
        latencyMs: Math.max(0, Math.round(result.finished - result.started)),
        ...(result.error ? { error: result.error } : {}),
      });
    } catch (error) {
      onError(error);
    }
  }
}
