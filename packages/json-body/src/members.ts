import { clipEcho, clipPointer, pointerToken } from '@holdfast/problem-details';

// JSON.parse spends about as long on one object of 100,000 members as on a 1 MiB body of small
// objects ten times over (V8 builds such an object as a hash table, member by member), and a
// validator then walks every member again. This scan finds an object over the bound in the JSON
// text itself, before anything is parsed, and stops there.

/** Where an object in a JSON text has more members than allowed. */
export interface WideObject {
  /** JSON Pointer (RFC 6901, URI-fragment form) to the object, cut to 100 characters: `#/metadata`. */
  readonly pointer: string;
  /** The same place as a dotted path, cut to 100 characters: `metadata`, or `(root)`. */
  readonly field: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

interface Frame {
  readonly object: boolean;
  /** Members seen (objects) or the current item's index (arrays). */
  count: number;
  /** The current key's JSON string, as offsets into the text. */
  keyStart: number;
  keyEnd: number;
}

/** The index just past the string starting at `start` (a quote), or -1 when it never ends. */
function stringEnd(text: string, start: number): number {
  for (let from = start + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return -1;
    let backslashes = 0;
    for (let at = quote - 1; text.charCodeAt(at) === BACKSLASH; at -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function keyOf(text: string, frame: Frame): string {
  if (frame.keyStart < 0) return '';
  try {
    const key: unknown = JSON.parse(text.slice(frame.keyStart, frame.keyEnd));
    return typeof key === 'string' ? key : '';
  } catch {
    return '';
  }
}

function locate(text: string, stack: readonly Frame[]): WideObject {
  const path: string[] = [];
  for (const frame of stack.slice(0, -1)) {
    path.push(clipEcho(frame.object ? keyOf(text, frame) : String(frame.count)));
  }
  const tokens = path.map(pointerToken);
  return {
    pointer: clipPointer(`#${tokens.map((token) => `/${token}`).join('')}`),
    field: path.length === 0 ? '(root)' : clipEcho(path.join('.')),
  };
}

/**
 * The first object in the JSON text `source` with more than `max` members, found without
 * parsing it: one pass over the text that stops at that object (after a native count of the
 * colons, when there are too few for any object to be over). `undefined` when there is none, or
 * when the text is not JSON or nests deeper than `maxDepth` (the parser and the depth check
 * answer those). Linear in the text, whatever it holds.
 *
 * @example
 * ```ts
 * widerThan('{"a":1,"b":2}', 1); // { pointer: '#', field: '(root)' }
 * widerThan('{"metadata":{"a":"1","b":"2"}}', 1)?.field; // 'metadata'
 * widerThan('{"a":1}', 1); // undefined
 * ```
 */
export function widerThan(source: string, max: number, maxDepth = 64): WideObject | undefined {
  let colons = 0;
  for (let at = source.indexOf(':'); at !== -1 && colons <= max; at = source.indexOf(':', at + 1))
    colons += 1;
  if (colons <= max) return undefined;
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < source.length; i += 1) {
    const unit = source.charCodeAt(i);
    const top = stack[stack.length - 1];
    switch (unit) {
      case QUOTE: {
        const end = stringEnd(source, i);
        if (end === -1) return undefined;
        if (expectKey && top?.object) {
          top.keyStart = i;
          top.keyEnd = end;
        }
        expectKey = false;
        i = end - 1;
        break;
      }
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (stack.length >= maxDepth) return undefined;
        stack.push({ object: unit === OPEN_OBJECT, count: 0, keyStart: -1, keyEnd: -1 });
        expectKey = unit === OPEN_OBJECT;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        stack.pop();
        expectKey = false;
        break;
      case COMMA:
        if (top?.object) expectKey = true;
        else if (top) top.count += 1;
        break;
      case COLON:
        if (top?.object) {
          top.count += 1;
          if (top.count > max) return locate(source, stack);
        }
        break;
    }
  }
  return undefined;
}
