import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

/** Resolves a host name to every address it has (the default uses the system resolver). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface DestinationOptions {
  /** Lift the private-address rules: local development and tests only (CONTRACT section 6). */
  allowPrivateDestinations?: boolean;
  /** Production mode: https only. */
  production?: boolean;
  /** DNS, injectable for tests. */
  resolve?: Resolver;
}

/** The verdict on a destination URL. */
export type DestinationCheck =
  | { ok: true; url: URL; addresses: string[]; resolved: boolean }
  | { ok: false; reason: string };

const FORBIDDEN_NAME = /(^|\.)(localhost|local|internal)$/i;

/** The system resolver, every address. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => a.address));
    });
  });

/**
 * Why an address may not be a webhook destination, or `undefined` when it may. Only ipaddr.js's
 * `unicast` range is allowed, after unwrapping IPv4-mapped IPv6 (`::ffff:10.0.0.1` is 10.0.0.1):
 * loopback, private, link-local, CGNAT, multicast, broadcast, unspecified, reserved, NAT64
 * (`64:ff9b::/96`, which reaches IPv4 space), 6to4 and Teredo are all refused.
 */
export function forbiddenAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) {
    parsed = parsed.toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : `${address} is in the ${range} range`;
}

/**
 * Checks a customer-supplied destination (SPEC section 6, "Destination URLs"; CONTRACT
 * section 6): http(s) only (https only in production), no credentials, not a name such as
 * `localhost`, `*.local` or `*.internal`, and every address it resolves to, or its literal
 * address, in global unicast. A name that does not resolve is accepted (`resolved: false`):
 * it is checked again at every attempt.
 *
 * @example
 * ```ts
 * const check = await checkDestination('https://hooks.example.com/in', { production: true });
 * if (!check.ok) throw problem('destination_url_forbidden', { detail: check.reason });
 * ```
 */
export async function checkDestination(
  raw: string,
  options: DestinationOptions = {},
): Promise<DestinationCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'the URL is not valid' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'only http and https URLs are allowed' };
  if (options.production && url.protocol !== 'https:')
    return { ok: false, reason: 'production destinations must use https' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  // The WHATWG parser has already turned decimal, hex and octal IPv4 forms into dotted quads.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (options.allowPrivateDestinations) return { ok: true, url, addresses: [], resolved: false };
  if (FORBIDDEN_NAME.test(host))
    return { ok: false, reason: `"${url.hostname}" names a local or internal host` };
  if (ipaddr.isValid(host)) {
    const why = forbiddenAddress(host);
    return why ? { ok: false, reason: why } : { ok: true, url, addresses: [host], resolved: true };
  }
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch {
    return { ok: true, url, addresses: [], resolved: false };
  }
  for (const address of addresses) {
    const why = forbiddenAddress(address);
    if (why) return { ok: false, reason: `"${url.hostname}" resolves to ${why}` };
  }
  return { ok: true, url, addresses, resolved: addresses.length > 0 };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * An undici Agent whose connections go only to addresses that passed {@link forbiddenAddress}:
 * DNS is resolved at connect time and the socket is opened to exactly the checked address, so
 * a name cannot be rebound between the check and the connection.
 */
export function pinnedAgent(options: DestinationOptions & { connectTimeoutMs?: number } = {}): Agent {
  const resolver = options.resolve ?? systemResolver;
  return new Agent({
    connect: {
      timeout: options.connectTimeoutMs ?? 10_000,
      lookup(hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) {
        resolver(hostname).then(
          (addresses) => {
            if (addresses.length === 0) {
              callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '');
              return;
            }
            if (!options.allowPrivateDestinations) {
              for (const address of addresses) {
                const why = forbiddenAddress(address);
                if (why) {
                  callback(
                    Object.assign(new Error(`destination forbidden: ${why}`), { code: 'EFORBIDDEN' }),
                    '',
                  );
                  return;
                }
              }
            }
            const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
            const first = entries[0];
            if (lookupOptions.all) callback(null, entries);
            else if (first) callback(null, first.address, first.family);
          },
          (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''),
        );
      },
    },
  });
}
