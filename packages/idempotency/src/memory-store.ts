import type { ClaimInput, ClaimResult, HeldKey, IdempotencyStore, StoredResponse } from './store';

interface Entry {
  fingerprint: string;
  token: string;
  lockedUntil: Date;
  expiresAt: Date;
  response: StoredResponse | null;
}

/**
 * Keys in a `Map`: for one process (tests, a single-instance service, handlers with no
 * database). Several processes need the PostgreSQL store.
 *
 * @example
 * ```ts
 * const store = memoryIdempotencyStore();
 * const response = await runIdempotent(store, { key: 'k1', account: 'acct_1', method: 'POST', path: '/v1/orders', body }, () => createOrder(body));
 * ```
 */
export function memoryIdempotencyStore(): IdempotencyStore {
  const entries = new Map<string, Entry>();
  const id = (account: string, key: string): string => JSON.stringify([account, key]);
  // The entry `held` names, while its token still holds it unanswered.
  const heldEntry = (held: HeldKey): Entry | undefined => {
    const entry = entries.get(id(held.account, held.key));
    return entry !== undefined && entry.token === held.token && entry.response === null ? entry : undefined;
  };
  return {
    async claim(input: ClaimInput): Promise<ClaimResult> {
      const entryId = id(input.account, input.key);
      const entry = entries.get(entryId);
      const now = input.now.getTime();
      const free =
        entry === undefined ||
        entry.expiresAt.getTime() <= now ||
        (entry.response === null && entry.lockedUntil.getTime() <= now);
      if (free) {
        entries.set(entryId, {
          fingerprint: input.fingerprint,
          token: input.token,
          lockedUntil: input.lockedUntil,
          expiresAt: input.expiresAt,
          response: null,
        });
        return { outcome: 'claimed' };
      }
      if (entry.response !== null) {
        return { outcome: 'completed', fingerprint: entry.fingerprint, response: copy(entry.response) };
      }
      return { outcome: 'running', fingerprint: entry.fingerprint, lockedUntil: entry.lockedUntil };
    },

    async complete(held: HeldKey, response: StoredResponse, expiresAt: Date): Promise<boolean> {
      const entry = heldEntry(held);
      if (entry === undefined) return false;
      entry.response = copy(response);
      entry.expiresAt = expiresAt;
      return true;
    },

    async extend(held: HeldKey, lockedUntil: Date): Promise<boolean> {
      const entry = heldEntry(held);
      if (entry === undefined) return false;
      entry.lockedUntil = lockedUntil;
      return true;
    },

    async release(held: HeldKey): Promise<void> {
      if (heldEntry(held) !== undefined) entries.delete(id(held.account, held.key));
    },

    async purge(options: { now: Date; batchSize?: number }): Promise<number> {
      let deleted = 0;
      for (const [entryId, entry] of entries) {
        if (entry.expiresAt.getTime() <= options.now.getTime()) {
          entries.delete(entryId);
          deleted += 1;
        }
      }
      return deleted;
    },
  };
}

function copy(response: StoredResponse): StoredResponse {
  return {
    status: response.status,
    headers: { ...response.headers },
    body: response.body === null ? null : response.body.slice(),
  };
}
