export type { Limiter, RateLimitConfig, RateLimiterOptions, RateLimitHeaders } from './limiter';
export { applyRateLimitHeaders, rateLimiter } from './limiter';
export type { MemoryStore, MemoryStoreOptions } from './memory-store';
export { MAX_BUCKETS, memoryStore } from './memory-store';
export type { BucketSpec, BucketState, BucketStore } from './store';
