import type { Db } from './index';

/** Why the process is not ready to serve, or `undefined` when it is. */
export type Readiness = () => Promise<string | undefined>;

/** Options of {@link migrationReadiness}. */
export interface ReadinessOptions {
  /** The schema of the table of applied ids, as given to `migrate`. */
  readonly schema?: string;
  /** The table of applied ids, as given to `migrate`. @defaultValue `'holdfast_migrations'` */
  readonly table?: string;
  /** How long the database may take to answer before it counts as not ready. @defaultValue 2000 */
  readonly withinMs?: number;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function name(value: string, what: string): string {
  if (!IDENTIFIER.test(value)) throw new TypeError(`${what} must be a lower-case SQL identifier`);
  return value;
}

/**
 * The readiness check of a process on `db` (a `/readyz`): ready when the database answers
 * within `withinMs` and every id of `expected` is recorded as applied by `migrate`. A process
 * older or newer than its database is not ready, and neither is one whose database is down or
 * slow (a connect can take 30 s: the check gives up long before). It never throws: each reason
 * is a sentence for the answer.
 *
 * @throws TypeError at once when `schema` or `table` is no lower-case identifier.
 * @example
 * ```ts
 * const ready = migrationReadiness(db, migrations.map((m) => m.id));
 * const why = await ready(); // undefined, or '2 migration(s) not applied'
 * ```
 */
export function migrationReadiness(
  db: Db,
  expected: readonly string[],
  options: ReadinessOptions = {},
): Readiness {
  const { schema, table = 'holdfast_migrations', withinMs = 2000 } = options;
  const qualified = `${schema === undefined ? '' : `${name(schema, 'schema')}.`}${name(table, 'table')}`;
  return async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('the database did not answer in time'), withinMs);
    });
    const check = (async () => {
      const rows = await db.query<{ id: string }>(`select id from ${qualified}`);
      const applied = new Set(rows.map((row) => row.id));
      const missing = expected.filter((id) => !applied.has(id));
      return missing.length === 0 ? undefined : `${missing.length} migration(s) not applied`;
    })().catch(() => 'the database cannot be reached');
    try {
      return await Promise.race([check, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
