// Type tests: checked by `tsc -p tsconfig.json` (the root typecheck), not run by vitest.
import type { Db, Transaction } from '@holdfast/db';
import { drizzleTransaction } from '@holdfast/db/drizzle';
import { kyselyTransaction } from '@holdfast/db/kysely';
import { pgTransaction } from '@holdfast/db/pg';
import { postgresTransaction } from '@holdfast/db/postgres';
import { sql as drizzleSql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { FastifyRequest } from 'fastify';
import type { Context } from 'hono';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type postgres from 'postgres';
import { expectTypeOf } from 'vitest';
import { withIdempotency as withExpressIdempotency } from '../src/express';
import { withIdempotency as withFastifyIdempotency } from '../src/fastify';
import { withIdempotency } from '../src/hono';
import { type HandlerResult, idempotent, idempotentStatement } from '../src/index';

declare const c: Context;
declare const fastifyRequest: FastifyRequest;
declare const expressRequest: ExpressRequest;
declare const expressResponse: ExpressResponse;
declare const pool: pg.Pool;
declare const sql: postgres.Sql;
declare const db: Db;
const request = { key: 'k', account: 'acct_1', method: 'POST', path: '/v1/payments' };

// The typed transactions of @holdfast/db: each door's handler gets the driver's own, inferred.
void withIdempotency(c, { transaction: pgTransaction(pool), account: 'acct_1' }, async (client, tx) => {
  expectTypeOf(client).toEqualTypeOf<pg.PoolClient>();
  expectTypeOf(tx).toEqualTypeOf<Db>();
  await client.query('select 1');
  return { status: 201 };
});
void withExpressIdempotency(
  expressRequest,
  expressResponse,
  { transaction: pgTransaction(pool), account: 'acct_1' },
  async (client) => {
    expectTypeOf(client).toEqualTypeOf<pg.PoolClient>();
    return { status: 201 };
  },
);
void withFastifyIdempotency(
  fastifyRequest,
  { transaction: postgresTransaction(sql), account: 'acct_1' },
  async (tx) => {
    const inferred: postgres.TransactionSql = tx;
    await inferred`select 1`;
    return { status: 201 };
  },
);
declare const drizzle: NodePgDatabase;
void withFastifyIdempotency(
  fastifyRequest,
  { transaction: drizzleTransaction(drizzle, drizzleSql), account: 'acct_1' },
  async (tx) => {
    // A Drizzle transaction, not unknown: its query builder is there without a cast.
    await tx.execute(drizzleSql`select 1`);
    return { status: 201 };
  },
);
declare const kysely: Kysely<{ orders: { id: string } }>;
void idempotent(kyselyTransaction(kysely), request, async (trx) => {
  await trx.insertInto('orders').values({ id: 'ord_1' }).execute();
  return { status: 201 };
});

// Your own driver: any Transaction<Tx>; the handler gets your transaction.
interface OwnClient {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}
declare const ownTransaction: Transaction<OwnClient>;
void idempotent(ownTransaction, request, async (client) => {
  const inferred: OwnClient = client;
  await inferred.query('select 1', []);
  return { status: 201 };
});
// A web Response is an answer too.
void withIdempotency(
  c,
  { transaction: ownTransaction, account: 'acct_1' },
  async () => new Response(null, { status: 204 }),
);
// @ts-expect-error the account is required: keys are scoped to it
void withIdempotency(c, { transaction: ownTransaction, required: true }, async () => ({ status: 201 }));
// @ts-expect-error a transaction is required: a pool of postgres.js is no longer taken
void withIdempotency(c, { sql, account: 'acct_1' }, async () => ({ status: 201 }));
// The handler gets the driver's transaction, not a postgres.js one.
const postgresHandler = async (tx: postgres.TransactionSql) => ({ status: 201, body: await tx`select 1` });
// @ts-expect-error OwnClient is no TransactionSql
void withIdempotency(c, { transaction: ownTransaction, account: 'acct_1' }, postgresHandler);
// @ts-expect-error an answer needs a status
const missingStatus: HandlerResult = { body: {} };
void missingStatus;

// The one-statement path takes a Db and text writes.
void idempotentStatement(db, request, {
  answer: { status: 201, body: { id: 'ord_1' } },
  writes: (claimed) => ({
    text: `o as (insert into orders (id) select $1 where ${claimed})`,
    values: ['ord_1'],
  }),
});
// @ts-expect-error a postgres.js Sql is no Db
void idempotentStatement(sql, request, { answer: { status: 201 }, writes: () => ({ text: '' }) });
