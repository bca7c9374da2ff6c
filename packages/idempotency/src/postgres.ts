export { idempotent, type TransactionHandler } from './idempotent';
export { migrations, PostgresIdempotencyStore } from './postgres-store';
