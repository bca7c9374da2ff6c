export { type RedisScripting, type RedisStore, redisStore } from './redis-store';
