import type postgres from 'postgres';
import type { Outcome } from './classify';
import { opaqueId } from './id';
import type { LeasedRow } from './lease';

/** What one attempt came to, waiting to be written with the rest of its batch. */
export interface AttemptResult {
  row: LeasedRow;
  status: number | undefined;
  error: string | null;
  prefix: string | null;
  outcome: Outcome;
  nextStatus: 'succeeded' | 'failed' | 'dead';
  nextAttemptAt: Date | null;
  started: number;
  finished: number;
  /** A sign of overload: the endpoint's limit is halved. */
  congested: boolean;
  /** A fast success: the endpoint's limit grows by 1 / limit. */
  fast: boolean;
  /** Until when the endpoint asked (`Retry-After`) not to be sent anything. */
  pauseUntil: Date | null;
}

/** Deadlock between two workers' outcome statements (rows locked in their own orders). */
const DEADLOCK = '40P01';

/**
 * Writes a batch of outcomes in one statement: every attempt row,
 * every delivery's new state and lease release, the success side of endpoint health, the places
 * released counted in this worker's release stripe, and the pacing row only where something
 * changes: its adaptive limit (halved on overload, +1 per `limit` fast successes while under the
 * ceiling) or a `Retry-After` pause. In steady state no outcome statement touches the pacing row
 * the lease statements lock, so workers in several processes do not queue behind each other.
 * Only leases this worker still owns are released: one taken over after an expiry belongs to
 * its new owner, whose own outcome releases it. The statement is the function
 * `holdfast_write_outcomes` (migration 006), whose plan is pinned to index access.
 */
export async function writeOutcomes(
  sql: postgres.Sql,
  {
    owner,
    stripe,
    perEndpoint,
    batch,
  }: { owner: string; stripe: number; perEndpoint: number; batch: readonly AttemptResult[] },
): Promise<void> {
  const column = <T>(pick: (r: AttemptResult) => T) => batch.map(pick);
  for (let tries = 1; ; tries += 1) {
    try {
      await sql`
        select holdfast_write_outcomes(
          ${owner}, ${stripe}::int, ${perEndpoint}::int,
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
          ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
          ${column((r) => (r.congested ? 't' : 'f'))}::text[]::bool[],
          ${column((r) => (r.fast ? 't' : 'f'))}::text[]::bool[],
          ${column((r) => r.pauseUntil?.toISOString() ?? null)}::timestamptz[])`;
      return;
    } catch (error) {
      // Two workers' batches can lock the same rows in different orders; PostgreSQL
      // breaks the cycle by failing one, which simply writes again.
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== DEADLOCK || tries >= 5) throw error;
    }
  }
}
