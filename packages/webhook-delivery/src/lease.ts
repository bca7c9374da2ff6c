import { pgArray } from './pg-array';
import type { QueueDb } from './sql/worker';

/** A leased delivery with what its attempt needs, read in the lease statement itself. */
export interface LeasedRow {
  id: string;
  account_id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  attempt_count: number;
  retry_base: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  payload: string;
}

export interface LeaseRequest {
  /** This worker's id, written as `lease_owner`. */
  owner: string;
  /** Deliveries wanted at most (the worker's free slots). */
  limit: number;
  /** The in-flight ceiling per endpoint (`perEndpointConcurrency`). */
  perEndpoint: number;
  at: Date;
  leaseMs: number;
  /** Endpoints this worker saw ask for a pause whose outcome is not written yet. */
  paused: readonly string[];
  /** The most attempts one endpoint may have running in this worker (its share of the slots). */
  endpointShare: number;
  /** This worker's attempts per endpoint still waiting for their answer, counted against `endpointShare`. */
  running: ReadonlyMap<string, number>;
  /**
   * This worker's attempts that have their answer but whose outcome is not written yet, with the
   * `attempt_count` each was leased at: their places are no longer in flight and count as free.
   */
  settled?: readonly { id: string; attemptCount: number }[];
  /**
   * The most unanswered attempts one account may have in this worker while another account's
   * endpoints are in the round: beyond it, an account's deliveries take only the slots left once
   * every other account in the round had what it could take within its share. Absent: no limit.
   */
  accountShare?: number | undefined;
  /** This worker's unanswered attempts per account, counted against `accountShare`. */
  accounts?: ReadonlyMap<string, number> | undefined;
}

/**
 * Leases due deliveries in one statement, fair across endpoints:
 *
 * 0. Wakes are applied: endpoints whose turn a writer found later than its new delivery come
 *    back into the rounds.
 * 1. Up to `limit` endpoints with due work, in turn order (the longest waiting first, ties in
 *    random order, those of accounts under their `accountShare` first; a served endpoint goes to
 *    the back, and the walk stops once it has `limit`), whose pacing row is free
 *    (`FOR UPDATE SKIP LOCKED`: a worker never waits for another, and holds the row for this one
 *    statement only), that are not paused by a `Retry-After`, that have room under their
 *    adaptive limit (or an expired lease to take over), and that run fewer than
 *    `endpointShare` attempts in this worker (a slow endpoint never takes every slot).
 * 2. For each, first the deliveries whose lease expired (a dead worker's: they already count as
 *    in flight), then due unleased ones up to the room left, the token bucket of `max_per_second`
 *    and an equal part of `limit` (an equal part per account, split among its endpoints), oldest
 *    due first, each `FOR UPDATE SKIP LOCKED`; what each account may take within its
 *    `accountShare` first, the rest only in slots left over (work-conserving).
 * 3. The pacing rows are charged (in-flight places, tokens) and the deliveries leased (on their
 *    queue rows, `holdfast_delivery_queue`, never on the delivery rows), returning
 *    the endpoint and event columns the attempts need: the whole round is one round trip.
 *
 * An endpoint's in-flight count is the places charged in its locked pacing row minus the places
 * released in its release stripes, so the bound holds across every worker and
 * process without a transaction, and outcome statements never queue behind a lease. The places
 * of this worker's `settled` attempts (answered, outcome not yet written) count as free, taken
 * from the leases in the statement's own snapshot: a place is freed when its
 * answer arrives, not when its outcome commits, and never twice. The scans
 * it needs are index probes bounded by the limit, never by the backlog nor by the number of
 * endpoints with work. The statement is the
 * function `holdfast_lease_deliveries`, defined in `migrations/005_functions.sql` and replaced by `migrations/009_queue.sql`,
 * `migrations/011_lease_reads.sql` (each row it needs read once, what it locked written by ctid)
 * and `migrations/013_turns_come.sql` (a turn another worker just moved has come).
 */
export async function leaseDue(queue: QueueDb, request: LeaseRequest): Promise<LeasedRow[]> {
  const { text, values } = leaseStatement(queue, request);
  const rows = await queue.db.query<LeasedRow & { previous_secret_expires_ms: number | null }>(text, values);
  return rows.map(({ previous_secret_expires_ms: expires, ...row }) => ({
    ...row,
    previous_secret_expires_at: expires === null ? null : new Date(expires),
  }));
}

/**
 * The lease statement of {@link leaseDue} and its values, not yet run (for EXPLAIN):
 * `holdfast_lease_deliveries` (`migrations/013_turns_come.sql`) with named arguments.
 */
export function leaseStatement(queue: QueueDb, request: LeaseRequest): { text: string; values: unknown[] } {
  const { at } = request;
  const running = [...request.running];
  const settled = request.settled ?? [];
  const accounts = [...(request.accounts ?? [])];
  return {
    text: queue.sql.lease,
    values: [
      request.owner,
      request.limit,
      request.perEndpoint,
      at.toISOString(),
      new Date(at.getTime() + request.leaseMs).toISOString(),
      pgArray(request.paused),
      request.endpointShare,
      pgArray(running.map(([id]) => id)),
      pgArray(running.map(([, n]) => n)),
      pgArray(settled.map((s) => s.id)),
      pgArray(settled.map((s) => s.attemptCount)),
      request.accountShare ?? null,
      pgArray(accounts.map(([id]) => id)),
      pgArray(accounts.map(([, n]) => n)),
    ],
  };
}

/**
 * Extends this worker's leases on `ids` (attempts still running), so a long attempt is never
 * taken over while it is alive; a lease another worker took over is left alone.
 */
export async function renewLeases(
  queue: QueueDb,
  { owner, ids, until }: { owner: string; ids: readonly string[]; until: Date },
): Promise<void> {
  if (ids.length === 0) return;
  await queue.db.query(queue.sql.renew, [until.toISOString(), pgArray(ids), owner]);
}

/** How many release counters each endpoint has: a worker writes the one its id picked. */
export const RELEASE_STRIPES = 16;

/** A release counter for a worker (or a one-off release): any stripe is correct, one each avoids waits. */
export function releaseStripe(random: () => number): number {
  return Math.floor(random() * RELEASE_STRIPES) % RELEASE_STRIPES;
}

/** Gives a lease back unattempted (an error before the attempt), with its in-flight place. */
export async function releaseLease(
  queue: QueueDb,
  { owner, id, stripe }: { owner: string; id: string; stripe: number },
): Promise<void> {
  await queue.db.query(queue.sql.release, [id, owner, stripe]);
}

/**
 * Recounts in-flight places from the leases themselves for endpoints whose count is not zero: it
 * repairs a count that something outside the workers left off (a lease cleared by hand, a killed
 * worker's charge). The pacing rows are locked first (so no lease statement charges them
 * meanwhile), then counted by a second step whose fresh snapshot sees every lease and
 * release committed before it, consistently (an outcome clears its leases and counts them
 * released in one statement): `in_flight` becomes the leases counted plus the releases counted,
 * and a release committed later lowers the count by exactly what it cleared. Both steps are one
 * statement (a PL/pgSQL block), so no transaction spans two round trips. Cheap and rare (every
 * few seconds); it first runs {@link resumeWaitingLines} and {@link settleTurns}.
 */
export async function reconcileInFlight(queue: QueueDb): Promise<void> {
  await resumeWaitingLines(queue);
  await settleTurns(queue);
  await queue.db.query(queue.sql.reconcile, []);
}

/** Turns the repair looks at in one run, first come first. */
const SETTLE_LIMIT = 1_000;

/**
 * Moves later the turns of endpoints a round would visit for nothing (no delivery leasable now:
 * all leased or retrying later, none queued, or the endpoint disabled): to when their first
 * delivery can be leased, or never. Only those turns are locked, `skip locked`, so a writer to an
 * endpoint with work never waits for it. A worker runs it at most every half second after a
 * round that leased less than it asked for, and with its recount; resolves with how many turns
 * it moved.
 */
export async function settleTurns(queue: QueueDb): Promise<number> {
  const [row] = await queue.db.query<{ moved: number }>(queue.sql.settle, [SETTLE_LIMIT]);
  return Number(row?.moved ?? 0);
}

/**
 * Makes due the head of every line of an ordered endpoint that waits with nothing ahead of it:
 * a delivery created behind one that finished while its creating statement ran, after the
 * finishing outcome's trigger looked for the next one (it could not see it yet). Each line is
 * visited once, by a skip scan of the queue's line index (one probe per line, never per delivery
 * waiting; `holdfast_queue_resume_lines`, migration 016); part of {@link reconcileInFlight}, so
 * every worker runs it every few seconds, never two at once in one worker. Resolves with how
 * many heads it made due.
 */
export async function resumeWaitingLines(queue: QueueDb): Promise<number> {
  const [row] = await queue.db.query<{ resumed: number }>(queue.sql.resumeLines, []);
  return row?.resumed ?? 0;
}
