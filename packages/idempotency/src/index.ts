export { type FingerprintInput, requestFingerprint } from './fingerprint';
export { idempotent, type WithIdempotencyOptions } from './idempotent';
export { migrations } from './migrations';
export { DEFAULT_STORED_HEADERS, type IdempotencyOptions, MIN_RETENTION_MS } from './options';
export { idempotencyDefinitions, idempotencyProblems } from './problems';
export { type SchedulePurgeOptions, schedulePurge } from './purge';
export type { IdempotentRequest } from './request';
export type { HandlerResult } from './response';
export { type IdempotentWrite, idempotentStatement } from './statement';
