/** The default retry delays: 1 min, 5 min, 30 min, 2 h, 6 h, 24 h. */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [
  60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000,
];

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses `HOLDFAST_RETRY_SCHEDULE`-style text (`1s,2s,5m`): n delays mean n retries after the
 * first attempt, n + 1 attempts in all.
 *
 * @example
 * ```ts
 * parseRetrySchedule('1s,2s'); // [1000, 2000]
 * ```
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  return parts.map((part) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(part);
    if (!match?.[1] || !match[2])
      throw new RangeError(`retry delay "${part}" is not a duration such as 500ms, 1s, 5m, 2h`);
    return Math.round(Number(match[1]) * (UNIT_MS[match[2]] ?? 1));
  });
}

/**
 * The delay before retry number `retry` (1-based) with ±10% jitter, so deliveries that failed
 * together do not all come back in the same instant; a longer `Retry-After` wins (429, 503).
 * Returns `undefined` when the schedule is exhausted: the delivery is dead.
 */
export function retryDelay(
  schedule: readonly number[],
  retry: number,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number | undefined {
  const base = schedule[retry - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return retryAfterMs !== undefined && retryAfterMs > jittered ? retryAfterMs : jittered;
}
