import { migrations } from './migrations';

/**
 * Every migration's SQL in one string. Each migration so far is idempotent, so this can be
 * applied at every start, but prefer `migrations` with a runner that records what it applied.
 *
 * @deprecated Use `migrations` (versioned, applied once each).
 * @example
 * ```ts
 * await sql.unsafe(schema);
 * ```
 */
export const schema: string = migrations.map((migration) => migration.sql).join('\n');
