/** Counts stop here: `include=total` is exact up to this many rows. */
export const TOTAL_COUNT_CAP = 10_000;

/** `pageInfo` of the list envelope. */
export interface PageInfo {
  /** The cursor of the next page, or `null` on the last page. */
  readonly nextCursor: string | null;
  /** Whether rows exist after this page. */
  readonly hasMore: boolean;
  /** With `include=total` only: the row count, at most `TOTAL_COUNT_CAP`. */
  readonly totalCount?: number;
  /** With `include=total` only: `true` when the count stopped at `TOTAL_COUNT_CAP`. */
  readonly totalCountCapped?: boolean;
}

/** The list envelope: a collection is always wrapped in an object. */
export interface Page<T> {
  readonly data: T[];
  readonly pageInfo: PageInfo;
}

/** The total part of `pageInfo` for a count taken with a `LIMIT TOTAL_COUNT_CAP + 1`. */
export interface TotalCount {
  readonly totalCount: number;
  readonly totalCountCapped: boolean;
}

/**
 * Caps a count for `pageInfo`: exact up to 10,000, above that 10,000 with
 * `totalCountCapped: true`.
 *
 * @example
 * ```ts
 * cappedTotal(42); // { totalCount: 42, totalCountCapped: false }
 * cappedTotal(10_001); // { totalCount: 10000, totalCountCapped: true }
 * ```
 */
export function cappedTotal(count: number): TotalCount {
  return count > TOTAL_COUNT_CAP
    ? { totalCount: TOTAL_COUNT_CAP, totalCountCapped: true }
    : { totalCount: count, totalCountCapped: false };
}

/**
 * Builds the `{ data, pageInfo }` envelope. `nextCursor` is forced to `null` when `hasMore`
 * is false, so a client never follows a cursor past the end.
 *
 * @example
 * ```ts
 * return c.json(pageEnvelope(orders, { nextCursor, hasMore: true }));
 * ```
 */
export function pageEnvelope<T>(
  data: T[],
  info: { nextCursor: string | null; hasMore: boolean; total?: TotalCount | undefined },
): Page<T> {
  const pageInfo: PageInfo = {
    nextCursor: info.hasMore ? info.nextCursor : null,
    hasMore: info.hasMore,
    ...(info.total
      ? { totalCount: info.total.totalCount, totalCountCapped: info.total.totalCountCapped }
      : {}),
  };
  return { data, pageInfo };
}
