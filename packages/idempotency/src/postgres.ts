export { idempotent, type TransactionHandler } from './idempotent';
export { PostgresIdempotencyStore, schema } from './postgres-store';
