/**
 * The rules of the contract check: SPEC section 9 rule 4 lists the changes that break `/v1`;
 * issue 18 spells each out for an OpenAPI document. Every finding names one of these.
 */
export const RULES = {
  removed:
    'SPEC 9.4 "removing or renaming a field": a path, operation, response status, field, header or media type removed or renamed',
  type: 'SPEC 9.4 "changing a field\'s type or nullability": a type, format or nullability changed',
  required:
    'SPEC 9.4 "adding a required request field": a request field newly required, or a parameter or body added as required',
  meaning:
    'SPEC 9.4 "changing the meaning of an existing value": an enum value removed or a constant changed',
  tightened:
    'SPEC 9.4 "tightening validation on an existing field": a request constraint narrowed (maxLength, maximum, pattern, minItems, ...), additionalProperties closed, or an accepted value removed',
  security:
    'SPEC 9.4 "tightening validation on an existing field", for credentials: a security scheme or scope made stricter on an operation',
} as const;

/** The id of a breaking-change rule. */
export type RuleId = keyof typeof RULES;

/** One difference between the published document and the new one. */
export interface Finding {
  readonly kind: 'breaking' | 'additive';
  /** The rule broken (breaking findings only). */
  readonly rule?: RuleId;
  /** `GET /v1/orders`, `webhook order.created`, or `document` for what no operation owns. */
  readonly operation: string;
  /** JSON path into the published document, through resolved `$ref`s. */
  readonly path: string;
  readonly detail: string;
}
