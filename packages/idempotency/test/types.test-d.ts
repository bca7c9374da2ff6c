// Type tests, checked by `tsc -p tsconfig.json` (not run by vitest).

import type { Transaction } from '@holdfast/db';
import { pgTransaction } from '@holdfast/db/pg';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { FastifyRequest } from 'fastify';
import type { Context } from 'hono';
import type pg from 'pg';
import type postgres from 'postgres';
import { withIdempotency as withExpressIdempotency } from '../src/express';
import { withIdempotency as withFastifyIdempotency } from '../src/fastify';
import { withIdempotency } from '../src/hono';
import { type HandlerResult, idempotentInTransaction } from '../src/index';
import { idempotent } from '../src/postgres';

declare const sql: postgres.Sql;
declare const tx: postgres.TransactionSql;
declare const c: Context;
declare const fastifyRequest: FastifyRequest;
declare const expressRequest: ExpressRequest;
declare const expressResponse: ExpressResponse;
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

// Your own driver: `{ transaction }` instead of `{ sql }`; the handler gets your transaction.
interface OwnClient {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}
declare const ownTransaction: Transaction<OwnClient>;
void withIdempotency(c, { transaction: ownTransaction, account: 'acct_1' }, async (client) => {
  await client.query('insert into orders (id) values ($1)', ['ord_1']);
  return { status: 201 };
});
void withFastifyIdempotency(
  fastifyRequest,
  { transaction: ownTransaction, account: 'acct_1' },
  async (client) => {
    const inferred: OwnClient = client;
    return { status: 201, body: inferred };
  },
);
void withExpressIdempotency(
  expressRequest,
  expressResponse,
  { transaction: ownTransaction, account: 'acct_1' },
  async () => ({ status: 201 }),
);
// The handler gets the driver's transaction, not a postgres.js one.
const postgresHandler = async (tx: postgres.TransactionSql) => ({ status: 201, body: await tx`select 1` });
// @ts-expect-error OwnClient is no TransactionSql
void withIdempotency(c, { transaction: ownTransaction, account: 'acct_1' }, postgresHandler);
// @ts-expect-error one way in: a pool or a transaction of yours, not both
void withIdempotency(c, { sql, transaction: ownTransaction, account: 'acct_1' }, async () => ({
  status: 201,
}));
// A Fetch handler: the same flow from the root.
void idempotentInTransaction(ownTransaction, request, async (client) => {
  await client.query('select 1', []);
  return { status: 201 };
});

// The typed transaction of @holdfast/db: the handler's client is a pg.PoolClient, inferred.
declare const pool: pg.Pool;
void withIdempotency(c, { transaction: pgTransaction(pool), account: 'acct_1' }, async (client) => {
  const inferred: pg.PoolClient = client;
  await inferred.query('select 1');
  return { status: 201 };
});
