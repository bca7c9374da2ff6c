import type { Migration } from '@holdfast/db/migrate';
import { LEASE_FUNCTION } from '../sql/lease-deliveries';
import { MATCH_FILTER_FUNCTION } from '../sql/match-filter';
import { WRITE_OUTCOMES_FUNCTION } from '../sql/write-outcomes';
import { schema } from './001_schema';
import { endpointFilter } from './002_endpoint_filter';
import { ordering } from './003_ordering';
import { statusSorts } from './004_status_sorts';

/** FNV-1a (32 bits) of `text`, in hex: names a version of the statements' text. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

const statements = `${LEASE_FUNCTION}\n${WRITE_OUTCOMES_FUNCTION}\n${MATCH_FILTER_FUNCTION}`;

/**
 * The hot statements' functions, defined once in `src/sql/`. Their id carries a fingerprint of
 * their text, so a release that changes them applies it once more (`create or replace`), and one
 * that does not leaves them be.
 */
const functions: Migration = {
  id: `webhook-delivery/statements-${fingerprint(statements)}`,
  sql: statements,
};

/**
 * The sender's versioned migrations, in apply order: the tables and indexes
 * (`webhook-delivery/001_schema`), endpoints' filters (`webhook-delivery/002_endpoint_filter`),
 * ordered delivery (`webhook-delivery/003_ordering`), the indexes of lists sorted by status
 * (`webhook-delivery/004_status_sorts`), then the hot statements
 * (`webhook-delivery/statements-<hash>`), which read the columns before them.
 * Apply each id once, in order, in a transaction under a lock (any `{ id, sql }` runner does).
 *
 * @example
 * ```ts
 * for (const m of migrations) if (!applied.has(m.id)) await tx.unsafe(m.sql);
 * ```
 */
export const migrations: readonly Migration[] = [schema, endpointFilter, ordering, statusSorts, functions];
