export { dbIdempotencyStore } from './db-store';
export { canonicalJson, type FingerprintInput, requestFingerprint } from './fingerprint';
export { idempotent } from './idempotent-db';
export { idempotentInTransaction, type WithIdempotencyTransactionOptions } from './in-transaction';
export { MAX_KEY_LENGTH, type ParsedIdempotencyKey, parseIdempotencyKey } from './key';
export { memoryIdempotencyStore } from './memory-store';
export {
  DEFAULT_LEASE_MS,
  DEFAULT_STORED_HEADERS,
  type IdempotencyOptions,
  MIN_RETENTION_MS,
} from './options';
export { idempotencyDefinitions, idempotencyProblems } from './problems';
export { type SchedulePurgeOptions, schedulePurge } from './purge';
export type { IdempotentRequest } from './request';
export type { HandlerResult } from './response';
export { runIdempotent } from './run-idempotent';
export type { ClaimInput, ClaimResult, HeldKey, IdempotencyStore, StoredResponse } from './store';
