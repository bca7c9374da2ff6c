export { idempotent, type TransactionHandler } from './idempotent';
export { migrations, postgresIdempotencyStore } from './postgres-store';
export { type Fragment, type IdempotentWrite, idempotentStatement } from './statement';
