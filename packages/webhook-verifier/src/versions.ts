/**
 * The latest version seen of each resource, to discard stale events (by sequence or
 * `updated_at`): delivery order is not guaranteed, so an update may arrive after a newer one.
 */
export interface VersionStore {
  /**
   * Records `version` for `resource` when it is strictly newer than the recorded one and
   * resolves to true; resolves to false, recording nothing, for a stale or equal version.
   * Atomic per resource.
   */
  advance(resource: string, version: number): Promise<boolean>;
}

/**
 * A comparable version from a `sequence` number or an `updatedAt` timestamp (ISO 8601 string
 * or `Date`, as milliseconds). Throws `TypeError` for anything else, so a payload without a
 * usable version is not silently treated as newest.
 *
 * @example
 * ```ts
 * versionOf(42); // 42
 * versionOf('2026-11-22T18:00:00Z'); // 1795284000000
 * ```
 */
export function versionOf(value: number | string | Date): number {
  const version =
    typeof value === 'number' ? value : value instanceof Date ? value.getTime() : Date.parse(value);
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new TypeError('a version must be a non-negative integer sequence or a valid date');
  }
  return version;
}

/**
 * A {@link VersionStore} in process memory, for one-process receivers and tests.
 *
 * @example
 * ```ts
 * const versions = memoryVersionStore();
 * await versions.advance('sub_1', 2); // true
 * await versions.advance('sub_1', 1); // false: stale
 * ```
 */
export function memoryVersionStore(): VersionStore {
  const latest = new Map<string, number>();
  return {
    async advance(resource, version) {
      const current = latest.get(resource);
      if (current !== undefined && current >= version) return false;
      latest.set(resource, version);
      return true;
    },
  };
}
