export { applyRateLimitHeaders, type Limiter, type RateLimitConfig, rateLimiter } from './limiter';
export { type MemoryStore, memoryStore } from './memory-store';
export type { BucketSpec, BucketState, BucketStore } from './store';
