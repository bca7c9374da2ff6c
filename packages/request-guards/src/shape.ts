import { clipEcho, clipPointer, pointerToken } from '@holdfast/problem-details';

// What JSON.parse costs depends on the shape more than on the size: a megabyte of numbers and
// strings parses in a few milliseconds, one object of 100,000 members (built as a hash table,
// member by member) or half a million nested arrays take a hundred times longer, and every walk
// after the parse pays again. This scan finds such a shape in the JSON text itself, before
// anything is parsed, and stops at the first bound broken.

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

/** Whether the next character after `from`, past JSON whitespace, is `]`. */
function closesAt(text: string, from: number): boolean {
  for (let at = from; at < text.length; at += 1) {
    const unit = text.charCodeAt(at);
    if (unit !== 0x20 && unit !== 0x09 && unit !== 0x0a && unit !== 0x0d) return unit === CLOSE_ARRAY;
  }
  return false;
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

/** The bounds {@link jsonShapeIssue} holds a JSON text to. */
export interface ShapeLimits {
  /** Most members in any one object. */
  readonly maxMembers: number;
  /** Deepest nesting of arrays and objects (the top-level value is depth 1). */
  readonly maxDepth: number;
  /** Most values in the whole text: the top-level one, every object member and every array item. */
  readonly maxValues: number;
}

/** The first bound a JSON text breaks: an object with too many members (named), too deep, too many values. */
export type ShapeIssue =
  | ({ readonly reason: 'members' } & WideObject)
  | { readonly reason: 'depth' }
  | { readonly reason: 'values' };

function countOf(text: string, char: string, stopAbove: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= stopAbove; at = text.indexOf(char, at + 1))
    count += 1;
  return count;
}

/**
 * The first bound the JSON text `source` breaks, found without parsing it: an object with more
 * than `maxMembers` members (named by pointer), nesting deeper than `maxDepth`, or more than
 * `maxValues` values in all (the top-level value, every member, every item). JSON.parse spends
 * far longer on one object of 100,000 members, or on half a million small values, than on a
 * megabyte of one string, and every walk after it (a depth check, the text rule, a validator)
 * pays again. One pass over the text that stops at the first issue, after native counts of
 * colons, commas and brackets, when there are too few for any bound to be broken. `undefined` when no bound is broken, or when the text is
 * not JSON as far as the scan can tell (the parser answers that).
 *
 * @example
 * ```ts
 * const limits = { maxMembers: 1, maxDepth: 64, maxValues: 10_000 };
 * jsonShapeIssue('{"a":1,"b":2}', limits); // { reason: 'members', pointer: '#', field: '(root)' }
 * jsonShapeIssue('{"metadata":{"a":"1","b":"2"}}', limits); // { reason: 'members', pointer: '#/metadata', ... }
 * jsonShapeIssue('{"a":1}', limits); // undefined
 * ```
 */
export function jsonShapeIssue(source: string, limits: ShapeLimits): ShapeIssue | undefined {
  const { maxMembers, maxDepth, maxValues } = limits;
  // Values are at most 1 + colons + commas + opening brackets; members at most the colons.
  const bound = Math.max(maxValues, maxDepth);
  const colons = countOf(source, ':', bound);
  const rough =
    1 + colons + countOf(source, ',', bound) + countOf(source, '{', bound) + countOf(source, '[', bound);
  if (rough <= Math.min(maxDepth, maxValues) && colons <= maxMembers) return undefined;
  const stack: Frame[] = [];
  let values = 1;
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
      case OPEN_ARRAY: {
        if (stack.length >= maxDepth) return { reason: 'depth' };
        const object = unit === OPEN_OBJECT;
        // An array's first item is counted here, unless the array is empty; the rest at their commas.
        if (!object && !closesAt(source, i + 1)) values += 1;
        if (values > maxValues) return { reason: 'values' };
        stack.push({ object, count: 0, keyStart: -1, keyEnd: -1 });
        expectKey = object;
        break;
      }
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        stack.pop();
        expectKey = false;
        break;
      case COMMA:
        if (top?.object) expectKey = true;
        else if (top) {
          top.count += 1;
          values += 1;
          if (values > maxValues) return { reason: 'values' };
        }
        break;
      case COLON:
        if (top?.object) {
          top.count += 1;
          values += 1;
          if (top.count > maxMembers) return { reason: 'members', ...locate(source, stack) };
          if (values > maxValues) return { reason: 'values' };
        }
        break;
    }
  }
  return undefined;
}
