// Allowed source ranges of a receiver: CIDR matching for IPv4 and IPv6 in plain TypeScript, so
// the toolkit runs on every runtime (no node:net) and adds no dependency.

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
type Bytes = readonly number[];

const DECIMAL_OCTET = /^(?:0|[1-9]\d{0,2})$/;

function parseIPv4(text: string): Bytes | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    // Leading zeros are refused: "010" is octal to some parsers and decimal to others.
    if (!DECIMAL_OCTET.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return bytes;
}

const HEXTET = /^[0-9a-f]{1,4}$/i;

function parseHextets(groups: readonly string[]): number[] | undefined {
  const out: number[] = [];
  for (const group of groups) {
    if (!HEXTET.test(group)) return undefined;
    const value = Number.parseInt(group, 16);
    out.push(value >> 8, value & 0xff);
  }
  return out;
}

function parseIPv6(text: string): Bytes | undefined {
  // A zone (fe80::1%eth0) names an interface, not part of the address.
  const address = text.replace(/%[^%]*$/, '');
  let tail: number[] = [];
  let head = address;
  const lastColon = address.lastIndexOf(':');
  if (address.includes('.', lastColon)) {
    const ipv4 = parseIPv4(address.slice(lastColon + 1));
    if (!ipv4) return undefined;
    tail = [...ipv4];
    head = `${address.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const split = (half: string) => (half === '' ? [] : half.split(':'));
  const left = parseHextets(split(halves[0] ?? ''));
  const right = halves.length === 2 ? parseHextets(split(halves[1] ?? '')) : [];
  if (!left || !right) return undefined;
  const missing = 16 - left.length - right.length;
  if (halves.length === 2 ? missing < 2 : missing !== 0) return undefined;
  const bytes = [...left, ...new Array<number>(missing).fill(0), ...right];
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

const isMapped = (bytes: Bytes) =>
  bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;

/**
 * An IP address as bytes, or `undefined` when the text is not one. IPv4-mapped IPv6
 * (`::ffff:192.0.2.1`, what a dual-stack socket reports for an IPv4 client) comes out as its
 * IPv4 address, so it matches IPv4 ranges.
 */
export function parseIp(text: string): Bytes | undefined {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, '$1');
  const bytes = trimmed.includes(':') ? parseIPv6(trimmed) : parseIPv4(trimmed);
  if (!bytes) return undefined;
  return isMapped(bytes) ? bytes.slice(12) : bytes;
}

interface Range {
  bytes: Bytes;
  bits: number;
}

function parseRange(text: string): Range | undefined {
  const [base = '', prefix, ...rest] = text.trim().split('/');
  if (rest.length > 0) return undefined;
  const trimmed = base.trim().replace(/^\[(.*)\]$/, '$1');
  const raw = trimmed.includes(':') ? parseIPv6(trimmed) : parseIPv4(trimmed);
  if (!raw) return undefined;
  const width = raw.length * 8;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix.trim())) return undefined;
  const bits = prefix === undefined ? width : Number(prefix.trim());
  if (bits > width) return undefined;
  // An IPv4-mapped range (::ffff:0:0/96 and longer) is the IPv4 range it maps.
  if (isMapped(raw) && bits >= 96) return { bytes: raw.slice(12), bits: bits - 96 };
  return { bytes: raw, bits };
}

function contains(range: Range, address: Bytes): boolean {
  if (range.bytes.length !== address.length) return false;
  let bits = range.bits;
  for (let i = 0; bits > 0; i += 1, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((range.bytes[i] ?? 0) & mask) !== ((address[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** A parsed list of allowed source ranges. */
export interface SourceRanges {
  /** Whether `address` (IPv4, IPv6, or IPv4-mapped IPv6) lies in one of the ranges; `false` for anything that is not an address. */
  allows(address: string | undefined): boolean;
}

/**
 * Parses CIDR ranges (`203.0.113.0/24`, `2001:db8::/32`; a bare address is the one address),
 * IPv4 and IPv6. Throws a `RangeError` naming the first entry that is not a range.
 *
 * @example
 * ```ts
 * const sources = parseSourceRanges(['203.0.113.0/24', '2001:db8::/32']);
 * sources.allows('::ffff:203.0.113.9'); // true
 * ```
 */
export function parseSourceRanges(ranges: readonly string[]): SourceRanges {
  const parsed = ranges.map((text) => {
    const range = parseRange(text);
    if (!range) throw new RangeError(`"${text}" is not a CIDR range such as 203.0.113.0/24 or 2001:db8::/32`);
    return range;
  });
  return {
    allows(address) {
      if (address === undefined) return false;
      const bytes = parseIp(address);
      return bytes !== undefined && parsed.some((range) => contains(range, bytes));
    },
  };
}
