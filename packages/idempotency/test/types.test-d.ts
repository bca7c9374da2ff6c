// Type tests, checked by `tsc -p tsconfig.json` (not run by vitest).
import type { Context } from 'hono';
import type postgres from 'postgres';
import { withIdempotency } from '../src/hono';
import type { HandlerResult } from '../src/index';
import { idempotent } from '../src/postgres';

declare const sql: postgres.Sql;
declare const tx: postgres.TransactionSql;
declare const c: Context;
const request = { key: 'k', account: 'acct_1', method: 'POST', path: '/v1/payments' };

// The handler receives the transaction its writes commit in.
void idempotent(sql, request, async (_inner: postgres.TransactionSql) => ({
  status: 201,
  body: { ok: true },
}));
// The claim must commit on its own: a transaction is refused where the pool is expected.
// @ts-expect-error TransactionSql has no begin()
void idempotent(tx, request, async () => ({ status: 201 }));
// A web Response is an answer too.
void withIdempotency(
  c,
  { sql, account: 'acct_1', required: true },
  async () => new Response(null, { status: 204 }),
);
// @ts-expect-error the account is required: keys are scoped to it
void withIdempotency(c, { sql, required: true }, async () => ({ status: 201 }));
// @ts-expect-error an answer needs a status
const missingStatus: HandlerResult = { body: {} };
void missingStatus;
