import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIp, parseSourceRanges } from '../src/source-ranges';

// The receiver's CIDR matching, checked against Node's own BlockList (an independent
// implementation) on arbitrary addresses and prefixes.

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
const hextets = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 });
/** Full form, e.g. 2001:db8:0:0:0:0:0:1. */
const ipv6Full = hextets.map((h) => h.map((x) => x.toString(16)).join(':'));
/** The canonical compressed form, as the WHATWG URL parser writes it. */
const compressed = (full: string) => new URL(`http://[${full}]/`).hostname.slice(1, -1);

function oracle(range: string, bits: number, address: string, type: 'ipv4' | 'ipv6'): boolean {
  const list = new BlockList();
  list.addSubnet(range, bits, type);
  return list.check(address, type);
}

describe('parseSourceRanges', () => {
  it('matches IPv4 addresses exactly as BlockList does, for any base and prefix', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 32 }), ipv4, (base, bits, address) => {
        const ranges = parseSourceRanges([`${base}/${bits}`]);
        expect(ranges.allows(address)).toBe(oracle(base, bits, address, 'ipv4'));
        expect(ranges.allows(base)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('matches IPv6 addresses, full or compressed, exactly as BlockList does', () => {
    fc.assert(
      fc.property(
        ipv6Full,
        fc.integer({ min: 0, max: 128 }),
        ipv6Full,
        fc.boolean(),
        (base, bits, address, short) => {
          const range = `${short ? compressed(base) : base}/${bits}`;
          const ranges = parseSourceRanges([range]);
          const client = short ? address : compressed(address);
          expect(ranges.allows(client)).toBe(oracle(base, bits, address, 'ipv6'));
          expect(ranges.allows(base)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a nearby address differs in the last bit the prefix covers: in for the prefix before, out for it', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 1, max: 32 }), (base, bits) => {
        const octets = base.split('.').map(Number);
        const byte = Math.floor((bits - 1) / 8);
        octets[byte] = (octets[byte] ?? 0) ^ (1 << (7 - ((bits - 1) % 8)));
        const flipped = octets.join('.');
        expect(parseSourceRanges([`${base}/${bits}`]).allows(flipped)).toBe(false);
        expect(parseSourceRanges([`${base}/${bits - 1}`]).allows(flipped)).toBe(true);
      }),
    );
  });

  it('lets an IPv4-mapped IPv6 client address match IPv4 ranges, and a mapped range match IPv4', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 32 }), ipv4, (base, bits, address) => {
        const expected = oracle(base, bits, address, 'ipv4');
        expect(parseSourceRanges([`${base}/${bits}`]).allows(`::ffff:${address}`)).toBe(expected);
        expect(parseSourceRanges([`::ffff:${base}/${96 + bits}`]).allows(address)).toBe(expected);
      }),
    );
    expect(parseSourceRanges(['203.0.113.0/24']).allows('::FFFF:203.0.113.9')).toBe(true);
    expect(parseSourceRanges(['203.0.113.0/24']).allows('::ffff:cb00:7109')).toBe(true);
  });

  it('never lets IPv4 match an IPv6 range or the other way, nor anything that is not an address', () => {
    const both = parseSourceRanges(['0.0.0.0/0']);
    expect(both.allows('::1')).toBe(false);
    expect(parseSourceRanges(['::/0']).allows('127.0.0.1')).toBe(false);
    for (const junk of [
      undefined,
      '',
      'localhost',
      '127.0.0.1.',
      '127.1',
      '1.2.3.04',
      '1.2.3.256',
      ':::1',
      '1::2::3',
      'fe80::1%',
    ]) {
      expect(both.allows(junk)).toBe(false);
    }
    // A zone names an interface; the address still matches.
    expect(parseSourceRanges(['fe80::/10']).allows('fe80::1%eth0')).toBe(true);
  });

  it('takes a bare address as itself, and refuses what is not a range, naming it', () => {
    expect(parseSourceRanges(['127.0.0.3']).allows('127.0.0.3')).toBe(true);
    expect(parseSourceRanges(['127.0.0.3']).allows('127.0.0.4')).toBe(false);
    expect(parseSourceRanges(['2001:db8::5']).allows('2001:db8::5')).toBe(true);
    for (const bad of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/-1',
      '10.0.0/8',
      'example.com/8',
      '10.0.0.0/8/8',
      '10.0.0.0/ 8x',
    ]) {
      expect(() => parseSourceRanges([bad])).toThrow(
        new RangeError(`"${bad}" is not a CIDR range such as 203.0.113.0/24 or 2001:db8::/32`),
      );
    }
  });

  it('parses what sockets report, and only addresses', () => {
    expect(parseIp('::ffff:127.0.0.1')).toEqual([127, 0, 0, 1]);
    expect(parseIp('::1')).toEqual([...new Array(15).fill(0), 1]);
    expect(parseIp('[2001:db8::1]')).toHaveLength(16);
    fc.assert(
      fc.property(fc.string(), (text) => {
        const bytes = parseIp(text);
        if (bytes !== undefined) expect([4, 16]).toContain(bytes.length);
      }),
    );
  });
});
