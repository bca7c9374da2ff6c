/** What an attempt's outcome means for the delivery. */
export type Outcome = 'succeeded' | 'retry' | 'dead' | 'gone';

/**
 * Classifies an attempt (Standard Webhooks on 410, https://www.standardwebhooks.com/): 2xx succeeded;
 * 408, 429 and 5xx retried, as are timeouts and connection errors (`status` undefined); 410
 * disables the endpoint at once; redirects are never followed (the Location could point
 * anywhere, SSRF) and, like any other 4xx, end the delivery at once: `dead`.
 *
 * @example
 * ```ts
 * classifyAttempt(503); // 'retry'
 * classifyAttempt(302); // 'dead'
 * ```
 */
export function classifyAttempt(status: number | undefined): Outcome {
  if (status === undefined) return 'retry';
  if (status >= 200 && status < 300) return 'succeeded';
  if (status === 410) return 'gone';
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  return 'dead';
}

/** `Retry-After` (seconds or HTTP-date) in ms from `now`, or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
