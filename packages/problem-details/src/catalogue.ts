import { DEFAULT_TYPE_BASE, ProblemError, type ProblemInit, type RetryAfter } from './problem-error';

export { DEFAULT_TYPE_BASE };

/** One problem type as a service declares it: the stable code's HTTP status and short title. */
export interface ProblemDefinition {
  readonly status: number;
  readonly title: string;
}

/** A map from stable machine-readable code to its definition. */
export type ProblemDefinitions = Readonly<Record<string, ProblemDefinition>>;

/** Statuses whose responses must carry `Retry-After` (RFC 9110 section 10.2.3). */
export type RetryStatus = 429 | 503;

/**
 * The arguments `create` takes for one code: `retryAfter` is required for 429 and 503,
 * so such a problem cannot be built without it.
 */
export type CreateArgs<D extends ProblemDefinition> = D['status'] extends RetryStatus
  ? [init: ProblemInit & { retryAfter: RetryAfter }]
  : [init?: ProblemInit];

/** A declared set of problem types with typed constructors. */
export interface ProblemCatalogue<D extends ProblemDefinitions> {
  /** The definitions, as declared. */
  readonly definitions: D;
  /** The type URI of a code: the base followed by the code. */
  typeUri(code: keyof D & string): string;
  /** Builds the problem for `code`; 429/503 codes require `retryAfter`. */
  create<C extends keyof D & string>(code: C, ...args: CreateArgs<D[C]>): ProblemError<C>;
  /** Whether `code` is declared in this catalogue. */
  has(code: string): code is keyof D & string;
}

export interface CatalogueOptions {
  /**
   * What every type starts with, an absolute URI or an absolute path; the code is appended, so
   * `type` ends in the code. The default is relative, and a service renders it under its own
   * base with `typeBase` of the problem's context (`onProblem()` does, given `problemTypeBase()`).
   * @defaultValue `/problems/`
   */
  typeBase?: string;
}

/**
 * Declares a service's problem types once and returns typed constructors for them.
 *
 * @example
 * ```ts
 * const problems = defineProblems({
 *   out_of_stock: { status: 409, title: 'Out of stock' },
 *   busy: { status: 503, title: 'Busy' },
 * }, { typeBase: 'https://api.example.com/problems/' });
 * throw problems.create('out_of_stock', { detail: 'Only 2 left.' });
 * throw problems.create('busy', { retryAfter: 30 }); // retryAfter is required for 503
 * ```
 */
export function defineProblems<const D extends ProblemDefinitions>(
  definitions: D,
  options: CatalogueOptions = {},
): ProblemCatalogue<D> {
  const typeBase = options.typeBase ?? DEFAULT_TYPE_BASE;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(typeBase) && !/^\/(?!\/)/.test(typeBase)) {
    throw new TypeError(`typeBase must be an absolute URI or path, got ${JSON.stringify(typeBase)}`);
  }
  for (const [code, definition] of Object.entries(definitions)) {
    if (!/^[a-z][a-z0-9_]*$/.test(code)) {
      throw new TypeError(`problem code ${JSON.stringify(code)} must be lower_snake_case`);
    }
    if (!Number.isInteger(definition.status) || definition.status < 400 || definition.status > 599) {
      throw new RangeError(`problem ${code}: status must be an integer from 400 to 599`);
    }
  }
  const has = (code: string): code is keyof D & string => Object.hasOwn(definitions, code);
  const typeUri = (code: keyof D & string): string => typeBase + code;
  return {
    definitions,
    typeUri,
    has,
    create<C extends keyof D & string>(code: C, ...args: CreateArgs<D[C]>): ProblemError<C> {
      const definition = definitions[code];
      if (!definition || !has(code)) throw new TypeError(`unknown problem code ${JSON.stringify(code)}`);
      const init: ProblemInit = args[0] ?? {};
      if ((definition.status === 429 || definition.status === 503) && init.retryAfter === undefined) {
        throw new TypeError(`problem ${code} (${definition.status}) requires retryAfter`);
      }
      return new ProblemError({
        code,
        status: definition.status,
        title: definition.title,
        type: typeUri(code),
        ...init,
      });
    },
  };
}

/**
 * The general HTTP problems every Holdfast package and service shares: validation, auth, not
 * found, conflicts, limits, crashes. Codes are stable across releases: clients branch on
 * `code`, never on `title` or `detail`. Each package declares its own codes beside its code
 * with {@link defineProblems} (`invalid_cursor` in `@holdfast/cursor-pagination`,
 * `idempotency_key_*` in `@holdfast/idempotency`, ...), and a service declares its own.
 */
export const holdfastDefinitions = {
  invalid_json: { status: 400, title: 'Request body is not valid JSON' },
  validation_failed: { status: 400, title: 'Request failed validation' },
  unknown_field: { status: 400, title: 'Request has unknown fields' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  invalid_state_transition: { status: 409, title: 'Invalid state transition' },
  version_conflict: { status: 409, title: 'Version conflict' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  unprocessable: { status: 422, title: 'Unprocessable request' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

/** The codes of the shared catalogue. */
export type HoldfastProblemCode = keyof typeof holdfastDefinitions;

/** The shared catalogue with the default type base. */
export const holdfastProblems: ProblemCatalogue<typeof holdfastDefinitions> =
  defineProblems(holdfastDefinitions);

/**
 * Builds a problem of the shared catalogue.
 *
 * @example
 * ```ts
 * throw problem('validation_failed', {
 *   detail: 'amount must be a positive integer.',
 *   errors: [{ field: 'amount', code: 'too_small', detail: 'Must be at least 1.' }],
 * });
 * throw problem('rate_limited', { retryAfter: 2 });
 * ```
 */
export function problem<C extends HoldfastProblemCode>(
  code: C,
  ...args: CreateArgs<(typeof holdfastDefinitions)[C]>
): ProblemError<C> {
  return holdfastProblems.create(code, ...args);
}
