import { clipEcho, type ProblemError, problem } from '@holdfast/problem-details';
import { nestedDeeperThan } from './depth';
import { underflowingNumber } from './numbers';
import { jsonShapeIssue, type WideObject } from './shape';
import { wellFormedJson } from './text';
import { textProblem } from './text-problem';

// The framework-neutral core of the JSON body guards: a Fetch `Request` in, the parsed value (or
// `undefined` for no body) or a thrown `ProblemError` out. The `/hono`, `/express` and `/fastify`
// doors only hand it the request's bytes and keep the value where their framework expects it.

/** The limits of the JSON body guards, the same in every door. */
export interface JsonBodyOptions {
  /** Largest accepted body in bytes; larger ones get 413. @defaultValue 1 MiB */
  maxBytes?: number;
  /**
   * Deepest accepted nesting of arrays and objects (the top-level value is depth 1); deeper
   * bodies get 400 `validation_failed`, found in the text before it is parsed (a deep enough
   * body would otherwise overflow the stack of `JSON.stringify`, zod or a fingerprint: a 500).
   * @defaultValue 64
   */
  maxDepth?: number;
  /**
   * Most members accepted in any one object of the body; an object with more is 400
   * `validation_failed` (`too_many_members`, naming the object), found in the text before it is
   * parsed: one object of 100,000 members costs JSON.parse and a validator far more than a
   * request may block the server for.
   * @defaultValue 1000
   */
  maxMembers?: number;
  /**
   * Most values in the whole body (the top-level value, every object member, every array item);
   * more is 400 `validation_failed`, found in the text before it is parsed: half a million small
   * values fit in 1 MiB, and cost JSON.parse and every walk after it tens of times what one
   * megabyte-long string does.
   * @defaultValue 10000
   */
  maxValues?: number;
  /**
   * The text rule: U+0000 in any key or string and a `__proto__` key are
   * 400 `validation_failed` naming the field; lone surrogates become U+FFFD. `'as-is'` skips it.
   * @defaultValue `'well-formed'`
   */
  text?: 'well-formed' | 'as-is';
}

/** A parsed body: the value, and its JSON text when the text rule changed it (U+FFFD put in). */
export interface ParsedJson {
  readonly value: unknown;
  readonly rewritten: string | undefined;
}

/** The guards of one set of options, checked once: what every door runs per request. */
export interface JsonBodyGuard {
  readonly maxBytes: number;
  /** Whether a request of this method carries no body to read (GET, HEAD, DELETE, OPTIONS). */
  bodyless(method: string): boolean;
  /** 413 `payload_too_large` naming the limit. */
  tooLarge(): ProblemError;
  /**
   * The value of a non-empty body read whole: 415 unless JSON in UTF-8, 400 `invalid_json`,
   * 400 `validation_failed` for the shape, the depth and the text rule.
   */
  parse(bytes: Uint8Array, contentType: string | null | undefined): ParsedJson;
}

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** `application/json` or any `+json` type, with no charset or UTF-8 (RFC 8259 section 8.1). */
function isJsonMediaType(value: string | null | undefined): boolean {
  if (!value) return false;
  if (value === 'application/json') return true;
  const [essence = '', ...params] = value.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json' && !/^application\/[a-z0-9.!#$&^_-]+\+json$/.test(essence)) return false;
  return params.every((param) => !param.startsWith('charset=') || /^charset="?utf-8"?$/.test(param));
}

/** 400 `validation_failed` for an object over `maxMembers`, naming it. */
function tooManyMembers(wide: WideObject, max: number): ProblemError {
  return problem('validation_failed', {
    detail: `The object at ${wide.field} in the request body has more than ${max} members.`,
    errors: [
      {
        field: wide.field,
        pointer: wide.pointer,
        code: 'too_many_members',
        detail: `At most ${max} members.`,
      },
    ],
  });
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/**
 * Checks `options` once (a `RangeError` at start-up, never per request) and returns the guards
 * every door runs: the same limits, the same order, the same problems.
 *
 * @example
 * ```ts
 * const guard = jsonBodyGuard({ maxBytes: 64 * 1024 });
 * guard.parse(new TextEncoder().encode('{"a":1}'), 'application/json').value; // { a: 1 }
 * ```
 */
export function jsonBodyGuard(options: JsonBodyOptions = {}): JsonBodyGuard {
  const maxBytes = positive('maxBytes', options.maxBytes ?? 1024 * 1024);
  const maxDepth = positive('maxDepth', options.maxDepth ?? 64);
  const maxMembers = positive('maxMembers', options.maxMembers ?? 1000);
  const maxValues = positive('maxValues', options.maxValues ?? 10_000);
  const wellFormed = options.text !== 'as-is';
  const invalid = () => problem('invalid_json', { detail: 'The request body is not valid UTF-8 JSON.' });
  const tooDeep = () =>
    problem('validation_failed', {
      detail: `The request body nests arrays and objects deeper than ${maxDepth} levels.`,
    });
  return {
    maxBytes,
    bodyless: (method) => BODYLESS.has(method.toUpperCase()),
    tooLarge: () =>
      problem('payload_too_large', { detail: `The request body is larger than ${maxBytes} bytes.` }),
    parse(bytes, contentType) {
      if (!isJsonMediaType(contentType)) {
        throw problem('unsupported_media_type', {
          detail: 'Request bodies must be sent as application/json.',
          headers: { 'Accept-Post': 'application/json', 'Accept-Patch': 'application/json' },
        });
      }
      let source: string;
      try {
        source = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
      } catch {
        throw invalid();
      }
      const issue = jsonShapeIssue(source, { maxMembers, maxDepth, maxValues });
      if (issue?.reason === 'members') throw tooManyMembers(issue, maxMembers);
      if (issue?.reason === 'depth') throw tooDeep();
      if (issue?.reason === 'values') {
        throw problem('validation_failed', {
          detail: `The request body has more than ${maxValues} values (object members and array items).`,
        });
      }
      let value: unknown;
      try {
        value = JSON.parse(source);
      } catch {
        throw invalid();
      }
      // The scan has held the text to maxDepth already; this holds any text it could not read.
      if (nestedDeeperThan(value, maxDepth)) throw tooDeep();
      const underflow = underflowingNumber(source);
      if (underflow !== undefined) {
        throw problem('validation_failed', {
          detail: `The request body has a number that reads as 0 though it is not: ${clipEcho(underflow)}. Write 0, or a number of at least 5e-324 in magnitude.`,
        });
      }
      if (!wellFormed) return { value, rewritten: undefined };
      const checked = wellFormedJson(value, source);
      if (!checked.ok) throw textProblem(checked.issue);
      return {
        value: checked.value,
        rewritten: checked.value === value ? undefined : JSON.stringify(checked.value),
      };
    },
  };
}

/**
 * Reads a body stream up to `maxBytes`: the bytes, or `null` beyond it (the stream is cancelled,
 * so no more than `maxBytes` is ever buffered).
 *
 * @example
 * ```ts
 * const bytes = await readLimited(request.body, 1024);
 * ```
 */
export async function readLimited(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * A reader of JSON request bodies, its options checked once: for a Fetch `Request`, the parsed
 * value (`undefined` for a GET, HEAD, DELETE or OPTIONS request, or an empty body), or a thrown
 * `ProblemError`: 413 `payload_too_large` past `maxBytes` (a declared `Content-Length` before
 * reading, a stream cut off, never buffered whole), 415 `unsupported_media_type` unless
 * `application/json` or `+json` in UTF-8, 400 `invalid_json`, 400 `validation_failed` for too many
 * members, values or levels and for the text rule. What a Fetch handler (Next.js, Bun, Deno,
 * Workers) calls, and what the Express and Fastify doors run.
 *
 * @example
 * ```ts
 * const readBody = jsonBodyReader({ maxBytes: 1024 * 1024 });
 * export async function POST(request: Request) {
 *   try { return Response.json(await readBody(request), { status: 201 }); }
 *   catch (error) { return toProblemResponse(error, request); }
 * }
 * ```
 */
export function jsonBodyReader(options: JsonBodyOptions = {}): (request: Request) => Promise<unknown> {
  const guard = jsonBodyGuard(options);
  return async (request) => {
    if (guard.bodyless(request.method) || request.body === null) return undefined;
    const declared = request.headers.get('content-length');
    if (declared !== null && Number(declared) > guard.maxBytes) {
      await request.body.cancel().catch(() => {});
      throw guard.tooLarge();
    }
    const bytes = await readLimited(request.body, guard.maxBytes);
    if (bytes === null) throw guard.tooLarge();
    if (bytes.byteLength === 0) return undefined;
    return guard.parse(bytes, request.headers.get('content-type')).value;
  };
}
