import { problem } from '@holdfast/problem-details';

/** What `include` asked for. */
export interface Include {
  /** `include=total`: count the rows. */
  readonly total: boolean;
}

/**
 * Parses the `include` query parameter: a comma-separated list whose only value today is
 * `total`. Absent gives nothing; anything else throws 400 `validation_failed` naming the value,
 * so a typo is not silently ignored.
 *
 * @example
 * ```ts
 * parseInclude('total'); // { total: true }
 * parseInclude(undefined); // { total: false }
 * ```
 */
export function parseInclude(raw: string | null | undefined): Include {
  if (raw === undefined || raw === null) return { total: false };
  let total = false;
  for (const value of raw.split(',')) {
    if (value === 'total') {
      total = true;
      continue;
    }
    const shown = JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    const detail = `Unknown include value ${shown}; the only value is "total".`;
    throw problem('validation_failed', {
      detail,
      errors: [{ field: 'include', code: 'invalid_include', detail }],
    });
  }
  return { total };
}
