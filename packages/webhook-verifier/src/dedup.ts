/**
 * Where a receiver records the `webhook-id`s it has accepted: an already-recorded id means
 * already processed (https://www.standardwebhooks.com/). Delivery is at least once and retries
 * are signed afresh with a new timestamp, so records must outlive the whole retry schedule, not
 * just the timestamp tolerance.
 */
export interface DedupStore {
  /**
   * Records `key` until `expiresAt` (ms since the epoch). True when this call recorded it;
   * false when it is already recorded and not expired: a duplicate. Atomic: of two concurrent
   * claims of one key, exactly one gets true.
   */
  claim(key: string, expiresAt: number): Promise<boolean>;
  /** Forgets a claim whose hand-off failed, so that the sender's retry is processed. */
  release(key: string): Promise<void>;
  /** Deletes records expired at `now` (ms); resolves to how many went. */
  purge(now: number): Promise<number>;
}

/**
 * A {@link DedupStore} in process memory: for one-process receivers and tests. Records are
 * lost on restart; use the PostgreSQL store (`@holdfast/webhook-verifier/postgres`) otherwise.
 *
 * @example
 * ```ts
 * const dedup = memoryDedupStore();
 * await dedup.claim('evt_1', Date.now() + 86_400_000); // true
 * await dedup.claim('evt_1', Date.now() + 86_400_000); // false: a duplicate
 * ```
 */
export function memoryDedupStore(options: { now?: () => number } = {}): DedupStore {
  const now = options.now ?? Date.now;
  const records = new Map<string, number>();
  return {
    async claim(key, expiresAt) {
      const until = records.get(key);
      if (until !== undefined && until > now()) return false;
      records.set(key, expiresAt);
      return true;
    },
    async release(key) {
      records.delete(key);
    },
    async purge(at) {
      let purged = 0;
      for (const [key, until] of records) {
        if (until <= at) {
          records.delete(key);
          purged += 1;
        }
      }
      return purged;
    },
  };
}
