export {
  type CursorBindingInput,
  type CursorExpectation,
  type CursorPayload,
  type CursorResult,
  cursorBinding,
  decodeCursor,
  encodeCursor,
  type FilterValue,
  MAX_CURSOR_VALUE_LENGTH,
} from './cursor-codec';
export type { Page, PageInfo } from './envelope';
export type { Include } from './include';
export { type Keyring, MIN_SECRET_BYTES } from './keyring';
export { DEFAULT_LIMIT, MAX_LIMIT } from './limit';
export {
  type ListQuery,
  type ListQueryInput,
  type ListQueryOptions,
  parseListQuery,
} from './list-query';
export { type PaginateOptions, paginate, type SqlCondition } from './paginate';
export { cursorDefinitions, cursorProblems } from './problems';
