export {
  type CursorBindingInput,
  type CursorExpectation,
  type CursorPayload,
  type CursorResult,
  cursorBinding,
  decodeCursor,
  encodeCursor,
  type FilterValue,
  MAX_CURSOR_LENGTH,
  MAX_CURSOR_VALUE_LENGTH,
} from './cursor-codec';
export {
  cappedTotal,
  type Page,
  type PageInfo,
  pageEnvelope,
  TOTAL_COUNT_CAP,
  type TotalCount,
} from './envelope';
export { type Include, parseInclude } from './include';
export { checkKeyring, type Keyring, MIN_SECRET_BYTES } from './keyring';
export { clampLimit, DEFAULT_LIMIT, MAX_LIMIT } from './limit';
export {
  type ListQuery,
  type ListQueryInput,
  type ListQueryOptions,
  parseListQuery,
} from './list-query';
export { type PaginateOptions, paginate, type SqlCondition } from './paginate';
export { cursorDefinitions, cursorProblems } from './problems';
