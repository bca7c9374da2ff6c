import type postgres from 'postgres';

type Sql = postgres.Sql;

/** What the inbox processor decided for one inbound event. */
export type InboxOutcome = 'processed' | 'stale' | 'ignored';

/**
 * Event types this receiver acts on: the resources of our own contract. Any other type is
 * acknowledged (the receiver answered 200 already, SPEC section 6: "an event type the receiver
 * does not recognise is answered with 200") and marked `ignored`.
 */
const KNOWN_TYPE = /^(order|refund|payment|payment_method|subscription)\.[a-z_]+$/;

/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in milliseconds. */
const MIN_TIME = -62_167_219_200_000;
const MAX_TIME = 253_402_300_800_000;

/** Attempts before an event whose processing keeps failing is set aside as `failed`. */
export const INBOX_MAX_ATTEMPTS = 5;

interface Row {
  id: string;
  account_id: string;
  event_type: string | null;
  payload: unknown;
  attempts: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

interface Version {
  resourceId: string;
  sequence: string | null;
  updatedAt: string | null;
}

// The payload is trusted only because its signature verified; its shape is still checked.
function versionOf(payload: unknown): Version | undefined {
  const event = record(payload);
  const object = record(record(event?.data)?.object);
  const resourceId = object?.id;
  if (typeof resourceId !== 'string' || resourceId.length === 0 || resourceId.length > 255) return undefined;
  const rawSequence = event?.sequence;
  const sequence =
    typeof rawSequence === 'number' && Number.isSafeInteger(rawSequence) && rawSequence >= 0
      ? String(rawSequence)
      : typeof rawSequence === 'string' && /^\d{1,18}$/.test(rawSequence)
        ? rawSequence
        : null;
  const rawUpdated = object?.updatedAt;
  const updated = typeof rawUpdated === 'string' ? Date.parse(rawUpdated) : Number.NaN;
  // Years 0000 to 9999 only: JavaScript writes others as "+010000-..." or "-000001-...", which
  // PostgreSQL refuses; such a timestamp is no usable version.
  const updatedAt = updated >= MIN_TIME && updated < MAX_TIME ? new Date(updated).toISOString() : null;
  if (sequence === null && updatedAt === null) return undefined;
  return { resourceId, sequence, updatedAt };
}

async function processOne(
  tx: postgres.TransactionSql,
  row: Row,
): Promise<{
  outcome: InboxOutcome;
  resourceId: string | null;
  sequence: string | null;
}> {
  if (row.event_type === null || !KNOWN_TYPE.test(row.event_type)) {
    return { outcome: 'ignored', resourceId: null, sequence: null };
  }
  const version = versionOf(row.payload);
  // Without a version the event is a notification only (SPEC section 6): nothing to compare,
  // the consumer re-fetches current state from the sender's API.
  if (!version) return { outcome: 'processed', resourceId: null, sequence: null };
  // Stale-event discard (SPEC section 6): apply only what is newer than the newest version of
  // this resource already applied, by sequence when both have one, else by updatedAt. One
  // statement, so two processors racing on the same resource cannot both win.
  const applied = await tx<{ event_id: string }[]>`
    insert into holdfast_inbound_resource_versions (account_id, resource_id, sequence, updated_at, event_id)
    values (${row.account_id}, ${version.resourceId}, ${version.sequence}, ${version.updatedAt}, ${row.id})
    on conflict (account_id, resource_id) do update
      set sequence = excluded.sequence, updated_at = excluded.updated_at, event_id = excluded.event_id
      where case
        when excluded.sequence is not null and holdfast_inbound_resource_versions.sequence is not null
          then excluded.sequence > holdfast_inbound_resource_versions.sequence
        when excluded.updated_at is not null and holdfast_inbound_resource_versions.updated_at is not null
          then excluded.updated_at > holdfast_inbound_resource_versions.updated_at
        else false
      end
    returning event_id`;
  return {
    outcome: applied.length > 0 ? 'processed' : 'stale',
    resourceId: version.resourceId,
    sequence: version.sequence,
  };
}

/** What is kept of a processing failure: the SQLSTATE or error name, never payload data. */
function describeFailure(error: unknown): string {
  const code =
    error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message.slice(0, 200) : '';
  return code ? `${name} (SQLSTATE ${code}): ${message}` : `${name}: ${message}`;
}

/**
 * Works through up to `batch` pending inbound events that are due: leases them with
 * `FOR UPDATE SKIP LOCKED` (any number of processors in any number of processes), decides each
 * one and records the outcome in the same transaction. Each event runs in its own savepoint: one
 * whose processing fails is rolled back alone, retried after 2, 4, 8... seconds, and set aside
 * as `failed` after {@link INBOX_MAX_ATTEMPTS} attempts, so it never holds up the others.
 * Returns how many were handled.
 *
 * @example
 * ```ts
 * while ((await processInbox(sql)) > 0);
 * ```
 */
export async function processInbox(
  sql: Sql,
  batch = 50,
  log: (message: string) => void = (message) => console.error(message),
): Promise<number> {
  return sql.begin(async (tx) => {
    const rows = await tx<Row[]>`
      select id, account_id, event_type, payload, attempts from holdfast_inbound_events
      where status = 'pending' and (next_attempt_at is null or next_attempt_at <= now())
      order by received_at, id
      limit ${batch}
      for update skip locked`;
    for (const row of rows) {
      let result: Awaited<ReturnType<typeof processOne>>;
      try {
        result = await tx.savepoint((sp) => processOne(sp, row));
      } catch (error) {
        const attempts = row.attempts + 1;
        const failed = attempts >= INBOX_MAX_ATTEMPTS;
        const reason = describeFailure(error);
        log(
          `inbox: inbound event ${row.id} failed (attempt ${attempts}${failed ? ', set aside' : ''}): ${reason}`,
        );
        await tx`
          update holdfast_inbound_events
          set attempts = ${attempts}, last_error = ${reason},
              status = ${failed ? 'failed' : 'pending'},
              next_attempt_at = ${failed ? null : tx`now() + make_interval(secs => ${2 ** attempts})`},
              processed_at = ${failed ? tx`date_trunc('milliseconds', now())` : null}
          where id = ${row.id}`;
        continue;
      }
      await tx`
        update holdfast_inbound_events
        set status = ${result.outcome}, resource_id = ${result.resourceId}, sequence = ${result.sequence},
            attempts = attempts + 1, next_attempt_at = null,
            processed_at = date_trunc('milliseconds', now())
        where id = ${row.id}`;
    }
    return rows.length;
  });
}
