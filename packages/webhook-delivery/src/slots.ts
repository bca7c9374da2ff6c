/**
 * One worker's attempt slots, from lease to written outcome: no I/O, time from `now`. It decides
 * how many deliveries a lease round may ask for (`free`), how many one endpoint may still run
 * (`running` against `share`), and which answered attempts' places the lease statement may count
 * as free (`settled`).
 *
 * - An endpoint runs at most `share` unanswered attempts (three quarters of `concurrency`), so a
 *   quarter of the slots always stays for the others.
 * - An attempt unanswered after `slowMs` moves to a second budget of the same size: slow
 *   receivers then hold at most `concurrency` more attempts, never for long the slots fast
 *   endpoints need; at most twice `concurrency` attempts exist at once.
 */
export class Slots {
  readonly concurrency: number;
  /** The most unanswered attempts one endpoint may have in this worker. */
  readonly share: number;
  readonly #slowMs: number;
  readonly #now: () => number;
  readonly #attempts = new Map<
    string,
    {
      endpointId: string;
      account: string | undefined;
      attemptCount: number;
      started: number;
      leasedAt: number;
      answered: boolean;
    }
  >();
  readonly #running = new Map<string, number>();
  readonly #accounts = new Map<string, number>();

  constructor({ concurrency, slowMs, now }: { concurrency: number; slowMs: number; now: () => number }) {
    this.concurrency = concurrency;
    this.share = Math.max(1, concurrency - Math.max(1, Math.floor(concurrency / 4)));
    this.#slowMs = slowMs;
    this.#now = now;
  }

  /** Attempts held, answered or not, until their outcome is written. */
  get size(): number {
    return this.#attempts.size;
  }

  /** Slots a lease round may fill now. */
  free(): number {
    const at = this.#now();
    let young = 0;
    for (const a of this.#attempts.values()) if (!a.answered && at - a.started < this.#slowMs) young += 1;
    return Math.min(this.concurrency - young, 2 * this.concurrency - this.#attempts.size);
  }

  /** Unanswered attempts per endpoint, counted against `share` by the lease statement. */
  running(): ReadonlyMap<string, number> {
    return this.#running;
  }

  /** Answered attempts whose outcome is not written yet, with the attempt count each was leased at. */
  settled(): { id: string; attemptCount: number }[] {
    const out: { id: string; attemptCount: number }[] = [];
    for (const [id, a] of this.#attempts) if (a.answered) out.push({ id, attemptCount: a.attemptCount });
    return out;
  }

  /** Unanswered attempts per account (of attempts taken with one). */
  accounts(): ReadonlyMap<string, number> {
    return this.#accounts;
  }

  /**
   * Endpoints to hold back: of each account with at least `share` attempts unanswered after
   * `slowMs`, the endpoints that have such an attempt. One account's slow receivers then hold
   * at most about `share` places, and the rest stays for other accounts, while its endpoints
   * that answer promptly keep being served.
   */
  slowHeld(): string[] {
    const at = this.#now();
    const slow = new Map<string, { n: number; endpoints: Set<string> }>();
    for (const a of this.#attempts.values()) {
      if (a.account === undefined || a.answered || at - a.started < this.#slowMs) continue;
      const entry = slow.get(a.account) ?? { n: 0, endpoints: new Set<string>() };
      entry.n += 1;
      entry.endpoints.add(a.endpointId);
      slow.set(a.account, entry);
    }
    const held: string[] = [];
    for (const { n, endpoints } of slow.values()) if (n >= this.share) held.push(...endpoints);
    return held;
  }

  /** A delivery was leased and its attempt starts (`account`: the endpoint's, for the account rules). */
  take(id: string, endpointId: string, attemptCount: number, account?: string): void {
    const at = this.#now();
    this.#attempts.set(id, { endpointId, account, attemptCount, started: at, leasedAt: at, answered: false });
    this.#running.set(endpointId, (this.#running.get(endpointId) ?? 0) + 1);
    if (account !== undefined) this.#accounts.set(account, (this.#accounts.get(account) ?? 0) + 1);
  }

  /** The attempt's answer is in (or it ended without one): it no longer counts against the endpoint. */
  answer(id: string): void {
    const a = this.#attempts.get(id);
    if (!a || a.answered) return;
    a.answered = true;
    const left = (this.#running.get(a.endpointId) ?? 1) - 1;
    if (left > 0) this.#running.set(a.endpointId, left);
    else this.#running.delete(a.endpointId);
    if (a.account !== undefined) {
      const rest = (this.#accounts.get(a.account) ?? 1) - 1;
      if (rest > 0) this.#accounts.set(a.account, rest);
      else this.#accounts.delete(a.account);
    }
  }

  /** Its outcome is written (or its lease given back): the slot is free. */
  release(id: string): void {
    this.answer(id);
    this.#attempts.delete(id);
  }

  /** Attempts whose lease was last set more than `ageMs` ago (to renew). */
  leasedBefore(ageMs: number): string[] {
    const at = this.#now();
    const out: string[] = [];
    for (const [id, a] of this.#attempts) if (at - a.leasedAt > ageMs) out.push(id);
    return out;
  }

  /** Their leases were renewed now. */
  renewed(ids: readonly string[]): void {
    const at = this.#now();
    for (const id of ids) {
      const a = this.#attempts.get(id);
      if (a) a.leasedAt = at;
    }
  }
}
