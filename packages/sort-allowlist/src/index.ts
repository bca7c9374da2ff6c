export {
  acceptedSorts,
  defineSortAllowlist,
  type EnumSortField,
  MAX_SORT_KEYS,
  type NullPlacement,
  type NumberSortField,
  type ResolvedSortField,
  type Sort,
  type SortAllowlist,
  type SortAllowlistInit,
  type SortDirection,
  type SortField,
  type SortKey,
  type TextSortField,
  type TimestampSortField,
} from './allowlist';
export { type SortParameterObject, type SortParameterSchema, sortParameter } from './openapi';
export { orderBy, type SortExpression, sortExpressions } from './order-by';
export { parseSort, type SortProblem, type SortResult } from './parse-sort';
export { sortDefinitions, sortProblems } from './problems';
export { statusSorts } from './status-sorts';
