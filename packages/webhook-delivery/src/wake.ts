import type { Listener } from '@holdfast/db';
import type { QueueDb } from './sql/worker';

/**
 * The channel the outbox notifies when it creates deliveries, as a SQL expression: one per
 * schema (`holdfast_due.<schema>`, the connection's current schema when none is named), so
 * deployments and tests sharing a database in separate schemas do not wake each other. The
 * payload is always empty: PostgreSQL delivers identical notifications of one transaction once
 * (https://www.postgresql.org/docs/current/sql-notify.html), so a commit that fans out to many
 * endpoints still wakes each listener once, and only after it commits.
 */
export function wakeChannelSql(schema?: string): string {
  const name = schema === undefined ? 'current_schema()' : `'${schema.replace(/'/g, "''")}'`;
  return `left('holdfast_due.' || ${name}, 63)`;
}

/** The wake channel's name, as the worker's connection computes it. */
export async function wakeChannelName(queue: QueueDb): Promise<string> {
  const [row] = await queue.db.query<{ channel: string }>(queue.sql.channel);
  if (!row) throw new Error('no wake channel');
  return row.channel;
}

/** What {@link listenForWork} gives back. */
export interface WakeSubscription {
  /** Resolves once listening, or with the reason `LISTEN` failed. */
  readonly ready: Promise<{ listening: true } | { listening: false; error: unknown }>;
  stop(): Promise<void>;
}

/**
 * Calls `onWake` for every commit that created deliveries in this schema, and each time the
 * listener (re)connects, since notifications sent while it was away are lost.
 */
export function listenForWork(listener: Listener, channel: string, onWake: () => void): WakeSubscription {
  const request = listener
    .listen(channel, () => onWake())
    .then(
      (unlisten) => ({ unlisten }),
      (error: unknown) => ({ error }),
    );
  return {
    ready: request.then((r) =>
      'unlisten' in r ? { listening: true } : { listening: false, error: r.error },
    ),
    async stop() {
      const r = await request;
      if ('unlisten' in r) await r.unlisten().catch(() => {});
    },
  };
}
