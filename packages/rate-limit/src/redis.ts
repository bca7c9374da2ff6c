export type { RedisScripting, RedisStore, RedisStoreOptions } from './redis-store';
export { redisStore } from './redis-store';
export { TOKEN_BUCKET_SCRIPT } from './token-bucket-script';
