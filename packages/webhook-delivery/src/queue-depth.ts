import type { Db } from '@holdfast/db';
import { workerStatements } from './sql/worker';

/** The delivery queue at one instant. */
export interface QueueDepth {
  /** Deliveries due now and not leased, on active endpoints. */
  readonly due: number;
  /** Deliveries a worker holds a lease on. */
  readonly inFlight: number;
  /** Deliveries that used every attempt (dead letters). */
  readonly dead: number;
  /** How long the oldest due delivery on an active endpoint has waited; 0 when none is due. */
  readonly oldestDueSeconds: number;
}

/**
 * A reader of the queue's depth: one statement a call, and calls within the same second share one
 * answer, so the four gauges of one scrape cost one query. Read from the database, so every
 * process scraped reports the same numbers.
 *
 * @example
 * ```ts
 * const depth = await queueDepth(fromPg(pool))(); // { due, inFlight, dead, oldestDueSeconds }
 * ```
 */
export function queueDepth(
  db: Db,
  options: {
    /** The schema the sender's tables are in. @defaultValue the connection's `search_path` */
    readonly schema?: string;
    readonly now?: () => number;
  } = {},
): () => Promise<QueueDepth> {
  const { now = Date.now } = options;
  const text = workerStatements(options.schema).queueDepth;
  let last: { at: number; answer: Promise<QueueDepth> } | undefined;
  return () => {
    const at = now();
    if (last && at - last.at < 1000) return last.answer;
    const answer = (async () => {
      const [row] = await db.query<{ due: number; in_flight: number; dead: number; oldest: number | null }>(
        text,
      );
      return {
        due: row?.due ?? 0,
        inFlight: row?.in_flight ?? 0,
        dead: row?.dead ?? 0,
        oldestDueSeconds: Math.max(0, row?.oldest ?? 0),
      };
    })();
    last = { at, answer };
    answer.catch(() => {
      last = undefined;
    });
    return answer;
  };
}
