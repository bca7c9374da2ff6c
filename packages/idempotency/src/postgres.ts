export { idempotent, type TransactionHandler } from './idempotent';
export { type Migration, migrations, postgresIdempotencyStore } from './postgres-store';
export { type Fragment, type IdempotentWrite, idempotentStatement } from './statement';
