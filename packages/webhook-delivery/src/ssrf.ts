import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

/** Resolves a host name to every address it has (the default uses the system resolver). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface DestinationOptions {
  /** Lift the private-address rules: local development and tests only. */
  allowPrivateDestinations?: boolean;
  /**
   * URL prefixes, each ending in `/`, allowed even at a private or loopback address (the
   * port rule still holds): a development receiver such as `http://127.0.0.1:3000/demo/`,
   * while every other destination keeps the rules.
   */
  privateUrlPrefixes?: readonly string[];
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

// What a refusal says of an address: that it is not public, never which range it is in.
const NOT_PUBLIC_HOST = 'the host is not a public address';
const NOT_PUBLIC_NAME = 'the host name resolves to an address that is not a public address';

/** The system resolver, every address. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => a.address));
    });
  });

// IPv4 ranges refused beside everything ipaddr.js does not call `unicast` (it calls some of
// these `reserved`, some nothing at all in older versions): stated here so the rule does not
// depend on a library's naming.
const IPV4_SPECIAL: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, '"this network" (0.0.0.0/8)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0', 24, 'documentation (192.0.2.0/24)'],
  ['198.51.100.0', 24, 'documentation (198.51.100.0/24)'],
  ['203.0.113.0', 24, 'documentation (203.0.113.0/24)'],
  ['198.18.0.0', 15, 'benchmarking (198.18.0.0/15)'],
  ['192.88.99.0', 24, '6to4 relay anycast (192.88.99.0/24)'],
  ['240.0.0.0', 4, 'reserved (240.0.0.0/4)'],
];

// IPv6: only global unicast (2000::/3) is allowed, which already leaves out ::/96
// (IPv4-compatible), ::ffff:0:0/96 (IPv4-mapped: judged as its IPv4 address), 64:ff9b::/96
// (NAT64), 100::/64 (discard), fc00::/7, fe80::/10 and multicast. Inside 2000::/3 these go too.
const IPV6_SPECIAL: ReadonlyArray<readonly [string, number, string]> = [
  ['2001:db8::', 32, 'documentation (2001:db8::/32)'],
  ['3fff::', 20, 'documentation (3fff::/20)'],
  ['2001:2::', 48, 'benchmarking (2001:2::/48)'],
  ['2001:10::', 28, 'ORCHID (2001:10::/28)'],
  ['2001:20::', 28, 'ORCHIDv2 (2001:20::/28)'],
];

const within = (address: ipaddr.IPv4 | ipaddr.IPv6, [base, bits]: readonly [string, number, string]) =>
  address.kind() === ipaddr.parse(base).kind() && address.match(ipaddr.parse(base), bits);

function forbiddenIPv4(address: ipaddr.IPv4): string | undefined {
  const special = IPV4_SPECIAL.find((range) => within(address, range));
  if (special) return `an address in the ${special[2]} range`;
  const range = address.range();
  return range === 'unicast' ? undefined : `an address in the ${range} range`;
}

const ipv4Of = (bytes: readonly number[]) => new ipaddr.IPv4(bytes.slice(0, 4));

function forbiddenIPv6(address: ipaddr.IPv6): string | undefined {
  if (address.isIPv4MappedAddress()) return forbiddenIPv4(address.toIPv4Address());
  const bytes = address.toByteArray();
  if (address.match(ipaddr.parse('::') as ipaddr.IPv6, 96)) {
    return 'an IPv4-compatible IPv6 address (::/96)';
  }
  if (!address.match(ipaddr.parse('2000::') as ipaddr.IPv6, 3)) {
    return `an IPv6 address outside global unicast (2000::/3): the ${address.range()} range`;
  }
  // 6to4 (2002::/16) carries an IPv4 address in bits 16 to 47; Teredo (2001::/32) a server
  // address in bits 32 to 63 and the client's, inverted, in the last 32 bits.
  if (address.match(ipaddr.parse('2002::') as ipaddr.IPv6, 16)) {
    return forbiddenIPv4(ipv4Of(bytes.slice(2, 6)))
      ? 'a 6to4 address (2002::/16) embedding a forbidden IPv4 address'
      : undefined;
  }
  if (address.match(ipaddr.parse('2001::') as ipaddr.IPv6, 32)) {
    const server = ipv4Of(bytes.slice(4, 8));
    const client = ipv4Of(bytes.slice(12, 16).map((b) => b ^ 0xff));
    return forbiddenIPv4(server) || forbiddenIPv4(client)
      ? 'a Teredo address (2001::/32) embedding a forbidden IPv4 address'
      : undefined;
  }
  const special = IPV6_SPECIAL.find((range) => within(address, range));
  return special ? `an address in the ${special[2]} range` : undefined;
}

/**
 * Why an address may not be a webhook destination, or `undefined` when it may. Only global unicast is allowed: IPv4 that ipaddr.js calls `unicast`, less
 * documentation, benchmarking and other special ranges; IPv6 in 2000::/3, less documentation,
 * benchmarking and ORCHID, with 6to4 and Teredo judged by the IPv4 addresses they embed and
 * IPv4-mapped addresses by their IPv4 address. The reason names the rule, never the address; it
 * is for the operator's logs: refusals shown to a tenant say only "not a public address".
 */
export function forbiddenAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  return parsed instanceof ipaddr.IPv6 ? forbiddenIPv6(parsed) : forbiddenIPv4(parsed as ipaddr.IPv4);
}

/** Port 80, 443 or 1024 to 65535; the WHATWG parser leaves the scheme's default port empty. */
function allowedPort(url: URL): boolean {
  if (url.port === '') return true;
  const port = Number(url.port);
  return port === 80 || port === 443 || (port >= 1024 && port <= 65535);
}

/**
 * Checks a customer-supplied destination (OWASP SSRF prevention,
 * https://cheatsheetseries.owasp.org/cheatsheets/Server_Side_Request_Forgery_Prevention_Cheat_Sheet.html): http(s) only (https only in production), no credentials, port 80, 443 or 1024 to 65535, not a name such as
 * `localhost`, `*.local` or `*.internal`, and every address it resolves to, or its literal
 * address, in global unicast. An address refusal says "not a public address" and never which
 * range the address is in, so refusals cannot map a private network's names. A name that does not resolve is accepted (`resolved: false`):
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
  // Ports below 1024 other than 80 and 443 are system services (ssh, smtp, ...), never webhook
  // receivers; port 0 connects nowhere. The rule holds even where private hosts are allowed.
  if (!allowedPort(url)) return { ok: false, reason: 'only ports 80, 443 and 1024 to 65535 are allowed' };
  // The WHATWG parser has already turned decimal, hex and octal IPv4 forms into dotted quads.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (options.allowPrivateDestinations || allowedPrivately(url, options.privateUrlPrefixes))
    return { ok: true, url, addresses: [], resolved: false };
  if (FORBIDDEN_NAME.test(host))
    return { ok: false, reason: `"${url.hostname}" names a local or internal host` };
  if (ipaddr.isValid(host)) {
    return forbiddenAddress(host)
      ? { ok: false, reason: NOT_PUBLIC_HOST }
      : { ok: true, url, addresses: [host], resolved: true };
  }
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch {
    return { ok: true, url, addresses: [], resolved: false };
  }
  // Neither the address nor its range: a tenant must not learn what an internal name resolves
  // to, and naming the range (loopback, private, link-local) maps internal DNS one name at a time.
  if (addresses.some((address) => forbiddenAddress(address) !== undefined))
    return { ok: false, reason: NOT_PUBLIC_NAME };
  return { ok: true, url, addresses, resolved: addresses.length > 0 };
}

// The URL is parsed and normalised (no `..`, no default port), so a prefix cannot be escaped.
function allowedPrivately(url: URL, prefixes: readonly string[] | undefined): boolean {
  return prefixes?.some((prefix) => prefix.endsWith('/') && url.href.startsWith(prefix)) ?? false;
}

/**
 * The host names of {@link DestinationOptions.privateUrlPrefixes}: a connection's address check
 * knows only the host, and the whole URL was checked against the prefixes before it.
 */
export function privateHosts(options: DestinationOptions): ReadonlySet<string> {
  const hosts = new Set<string>();
  for (const prefix of options.privateUrlPrefixes ?? []) {
    if (URL.canParse(prefix)) hosts.add(new URL(prefix).hostname.replace(/^\[|\]$/g, ''));
  }
  return hosts;
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
  const allowedHosts = privateHosts(options);
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
            if (!options.allowPrivateDestinations && !allowedHosts.has(hostname)) {
              for (const address of addresses) {
                if (forbiddenAddress(address)) {
                  // The message reaches the tenant's attempt log: no range, as at registration.
                  callback(
                    Object.assign(new Error(`destination forbidden: ${NOT_PUBLIC_NAME}`), {
                      code: 'EFORBIDDEN',
                    }),
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
