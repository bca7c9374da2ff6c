import { tables } from './001_tables';
import { pacing } from './002_pacing';
import { signatureScheme } from './003_signature_scheme';
import { attemptStatsIndex } from './004_attempt_stats_index';
import { releaseStripes } from './005_release_stripes';
import { pinnedPlans } from './006_pinned_plans';
import { settledPlaces } from './007_settled_places';

/** A versioned migration: `id` is recorded once applied; `sql` runs once, in list order. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

/**
 * The sender's versioned migrations, in apply order (ids `webhook-delivery/NNN_<what>`). Apply
 * each id once, in order, in a transaction under a lock (any `{ id, sql }` runner does).
 *
 * @example
 * ```ts
 * for (const m of migrations) if (!applied.has(m.id)) await tx.unsafe(m.sql);
 * ```
 */
export const migrations: readonly Migration[] = [
  tables,
  pacing,
  signatureScheme,
  attemptStatsIndex,
  releaseStripes,
  pinnedPlans,
  settledPlaces,
];
