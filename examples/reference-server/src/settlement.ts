import type { Database } from './context';
import { settleDuePayments } from './resources/payments/repository';
import { LOOP_STATEMENT_TIMEOUT_MS, startLoop } from './workers';

/**
 * Settles `processing` payments when due (the background half of POST /v1/payments' 202).
 * Runs in every worker process; `for update skip locked` in `settleDuePayments` lets several
 * share the table. One round at a time, each statement under the loops' statement timeout.
 *
 * @example
 * ```ts
 * const settlement = startSettlementWorker({ database: deps, now: Date.now });
 * await settlement.stop();
 * ```
 */
export function startSettlementWorker(options: {
  readonly database: Database;
  readonly now: () => number;
  readonly idleMs?: number;
  readonly log?: (message: string) => void;
}): { stop(): Promise<void> } {
  return startLoop(
    'payment settlement',
    () => settleDuePayments(options.database, options.now(), LOOP_STATEMENT_TIMEOUT_MS),
    options.idleMs ?? 500,
    options.log ?? ((message) => console.error(message)),
  );
}
