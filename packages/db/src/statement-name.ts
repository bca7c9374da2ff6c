/**
 * The name a statement is prepared under (node-postgres): `hf_` and 128 bits of a hash of its
 * text. A function of the text alone, so every copy of this module in a process (two bundles,
 * two versions) gives one text one name, and two texts two names: a connection shared by
 * several packages never sees one name prepared for two statements. Same text, same name is
 * what a prepared-statement cache wants; no counter, no state.
 *
 * @example
 * ```ts
 * statementName('select 1') === statementName('select 1'); // true, in any copy of the package
 * ```
 */
export function statementName(text: string): string {
  // cyrb128 (four 32-bit lanes, murmur3-style finalisation) over the UTF-16 code units: not a
  // cryptographic hash, and none is needed (the texts are ours, not an attacker's); a chance
  // collision among thousands of texts is about 2^-100.
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i += 1) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return `hf_${[h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, '0')).join('')}`;
}
