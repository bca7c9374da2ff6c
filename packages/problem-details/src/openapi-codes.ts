import type { ProblemDefinitions } from './catalogue';

/** A JSON value, as an OpenAPI document holds it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Options of {@link problemCodes} and {@link narrowProblemCodes}. */
export interface ProblemCodesOptions {
  /** The catalogue every code comes from, in the order the codes are listed. */
  readonly definitions: ProblemDefinitions;
  /** The codes an operation answers with `status` by the rules that send them (its traits). */
  readonly implied?: (status: number) => readonly string[];
  /**
   * Whether the codes a response's description names count for `status`. Default: always; say
   * no where a shared description names every code of the status.
   */
  readonly named?: (status: number) => boolean;
}

/**
 * The `code` values a problem response can carry, as a closed set: the codes `implied` gives,
 * with the codes of that status its `description` names (`invalid_state_transition: shipped.`);
 * a status whose codes neither gives gets every catalogue code of that status. A generated
 * client can then switch over `code` exhaustively.
 *
 * @example
 * ```ts
 * problemCodes(404, 'not_found: no such order.', { definitions: holdfastProblems.definitions }); // ['not_found']
 * ```
 */
export function problemCodes(status: number, description: string, options: ProblemCodesOptions): string[] {
  const { definitions, implied = () => [], named = () => true } = options;
  const all = Object.keys(definitions);
  const ofStatus = all.filter((code) => definitions[code]?.status === status);
  const codes = new Set<string>(implied(status));
  if (named(status)) {
    for (const code of ofStatus) if (new RegExp(`\\b${code}\\b`).test(description)) codes.add(code);
  }
  if (codes.size === 0) for (const code of ofStatus) codes.add(code);
  return all.filter((code) => codes.has(code));
}

/**
 * Replaces the schema of each problem+json response in an OpenAPI operation's `responses` by
 * `Problem` (the `#/components/schemas/Problem` reference) with `code` narrowed to
 * {@link problemCodes}.
 *
 * @example
 * ```ts
 * narrowProblemCodes(document.paths['/v1/orders'].get.responses, { definitions: holdfastProblems.definitions });
 * ```
 */
export function narrowProblemCodes(responses: JsonObject, options: ProblemCodesOptions): void {
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response) || !isObject(response.content)) continue;
    const media = response.content['application/problem+json'];
    if (!isObject(media)) continue;
    const description = typeof response.description === 'string' ? response.description : '';
    media.schema = {
      allOf: [
        { $ref: '#/components/schemas/Problem' },
        {
          type: 'object',
          properties: { code: { type: 'string', enum: problemCodes(Number(status), description, options) } },
        },
      ],
    };
  }
}
