import { startLoop } from '@holdfast/db';
import { errorLine } from '@holdfast/problem-details';
import type { Database } from './context';
import { settleDuePayments } from './resources/payments/repository';
import { LOOP_STATEMENT_TIMEOUT_MS } from './workers';

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
  const log = options.log ?? ((message) => console.error(message));
  return startLoop(() => settleDuePayments(options.database, options.now(), LOOP_STATEMENT_TIMEOUT_MS), {
    idleMs: options.idleMs ?? 500,
    onError: (error) => log(`payment settlement: ${errorLine(error, false)}`),
  });
}
