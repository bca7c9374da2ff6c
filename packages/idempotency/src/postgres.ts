export { idempotent, type TransactionHandler } from './idempotent';
export { migrations, postgresIdempotencyStore } from './postgres-store';
