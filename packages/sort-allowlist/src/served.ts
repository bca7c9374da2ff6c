import type { SortAllowlist } from './allowlist';

/**
 * The indexed sort that serves `canonical`: itself, or the longest indexed prefix of it that
 * ends with a `fineGrained` key. `undefined` when none does (or the allowlist declares no
 * indexed sorts: then every sort is accepted and none is known to be indexed).
 *
 * @internal Shared by `parseSort`, `acceptedSorts` and the OpenAPI description.
 */
export function servingIndex(
  allowlist: Pick<SortAllowlist, 'fields' | 'indexed'>,
  canonical: string,
): string | undefined {
  const indexed = allowlist.indexed;
  if (indexed === undefined) return undefined;
  if (indexed.includes(canonical)) return canonical;
  const keys = canonical.split(',');
  for (let length = keys.length - 1; length >= 1; length -= 1) {
    const prefix = keys.slice(0, length).join(',');
    const last = keys[length - 1]?.replace(/^-/, '') ?? '';
    const field = Object.hasOwn(allowlist.fields, last) ? allowlist.fields[last] : undefined;
    if (field?.fineGrained === true && indexed.includes(prefix)) return prefix;
  }
  return undefined;
}
