import type postgres from 'postgres';

type Sql = postgres.ISql;

/**
 * The channel the outbox notifies when it creates deliveries, computed in SQL: one per schema
 * (`holdfast_due.<schema>`), so deployments and tests sharing a database in separate schemas do
 * not wake each other. The payload is always empty: PostgreSQL delivers identical notifications
 * of one transaction once (https://www.postgresql.org/docs/current/sql-notify.html), so a commit
 * that fans out to many endpoints still wakes each listener once, and only after it commits.
 */
export function wakeChannel(sql: Sql): postgres.PendingQuery<postgres.Row[]> {
  return sql`left('holdfast_due.' || current_schema(), 63)`;
}

/** What {@link listenForWork} gives back. */
export interface WakeSubscription {
  /** Resolves once listening, or with the reason `LISTEN` failed. */
  readonly ready: Promise<{ listening: true } | { listening: false; error: unknown }>;
  stop(): Promise<void>;
}

/**
 * Calls `onWake` for every commit that created deliveries in this schema, and once each time the
 * listening connection (re)connects, since notifications sent while it was away are lost.
 * postgres.js holds one dedicated connection for it and reconnects it by itself.
 */
export function listenForWork(sql: postgres.Sql, channel: string, onWake: () => void): WakeSubscription {
  const request = sql.listen(channel, onWake, onWake).then(
    (meta) => ({ meta }),
    (error: unknown) => ({ error }),
  );
  return {
    ready: request.then((r) => ('meta' in r ? { listening: true } : { listening: false, error: r.error })),
    async stop() {
      const r = await request;
      if ('meta' in r) await r.meta.unlisten().catch(() => {});
    },
  };
}
