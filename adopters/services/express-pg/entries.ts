// Every entry point of every package, except the postgres.js adapter (`@holdfast/db/postgres`),
// type-checked (skipLibCheck false) in this project, where postgres.js is not installed: no
// declaration of ours needs a driver the adopter did not choose.
import type * as apiKeys from '@holdfast/api-keys';
import type * as apiKeysExpress from '@holdfast/api-keys/express';
import type * as apiKeysFastify from '@holdfast/api-keys/fastify';
import type * as apiKeysHono from '@holdfast/api-keys/hono';
import type * as cursorPagination from '@holdfast/cursor-pagination';
import type * as cursorPaginationExpress from '@holdfast/cursor-pagination/express';
import type * as cursorPaginationFastify from '@holdfast/cursor-pagination/fastify';
import type * as cursorPaginationHono from '@holdfast/cursor-pagination/hono';
import type * as cursorPaginationZod from '@holdfast/cursor-pagination/zod';
import type * as db from '@holdfast/db';
import type * as dbDrizzle from '@holdfast/db/drizzle';
import type * as dbKysely from '@holdfast/db/kysely';
import type * as dbMigrate from '@holdfast/db/migrate';
import type * as dbPg from '@holdfast/db/pg';
import type * as dbPrisma from '@holdfast/db/prisma';
import type * as idempotency from '@holdfast/idempotency';
import type * as idempotencyExpress from '@holdfast/idempotency/express';
import type * as idempotencyFastify from '@holdfast/idempotency/fastify';
import type * as idempotencyHono from '@holdfast/idempotency/hono';
import type * as problemDetails from '@holdfast/problem-details';
import type * as problemDetailsExpress from '@holdfast/problem-details/express';
import type * as problemDetailsFastify from '@holdfast/problem-details/fastify';
import type * as problemDetailsHono from '@holdfast/problem-details/hono';
import type * as problemDetailsOpenapi from '@holdfast/problem-details/openapi';
import type * as rateLimit from '@holdfast/rate-limit';
import type * as rateLimitExpress from '@holdfast/rate-limit/express';
import type * as rateLimitFastify from '@holdfast/rate-limit/fastify';
import type * as rateLimitHono from '@holdfast/rate-limit/hono';
import type * as rateLimitRedis from '@holdfast/rate-limit/redis';
import type * as requestGuards from '@holdfast/request-guards';
import type * as requestGuardsExpress from '@holdfast/request-guards/express';
import type * as requestGuardsFastify from '@holdfast/request-guards/fastify';
import type * as requestGuardsHono from '@holdfast/request-guards/hono';
import type * as requestGuardsNode from '@holdfast/request-guards/node';
import type * as sortAllowlist from '@holdfast/sort-allowlist';
import type * as sortAllowlistZod from '@holdfast/sort-allowlist/zod';
import type * as webhookDelivery from '@holdfast/webhook-delivery';
import type * as webhookDeliveryOpenapi from '@holdfast/webhook-delivery/openapi';
import type * as webhookDeliveryPrometheus from '@holdfast/webhook-delivery/prometheus';
import type * as webhookSigner from '@holdfast/webhook-signer';
import type * as webhookVerifier from '@holdfast/webhook-verifier';
import type * as webhookVerifierExpress from '@holdfast/webhook-verifier/express';
import type * as webhookVerifierFastify from '@holdfast/webhook-verifier/fastify';
import type * as webhookVerifierHono from '@holdfast/webhook-verifier/hono';
import type * as webhookVerifierPostgres from '@holdfast/webhook-verifier/postgres';
import type * as webhookVerifierReceiver from '@holdfast/webhook-verifier/receiver';
import type * as webhookVerifierV1 from '@holdfast/webhook-verifier/v1';

export type Entries = [
  typeof apiKeys,
  typeof apiKeysHono,
  typeof apiKeysExpress,
  typeof apiKeysFastify,
  typeof cursorPagination,
  typeof cursorPaginationZod,
  typeof cursorPaginationHono,
  typeof cursorPaginationExpress,
  typeof cursorPaginationFastify,
  typeof db,
  typeof dbPg,
  typeof dbDrizzle,
  typeof dbKysely,
  typeof dbPrisma,
  typeof dbMigrate,
  typeof idempotency,
  typeof idempotencyHono,
  typeof idempotencyExpress,
  typeof idempotencyFastify,
  typeof problemDetails,
  typeof problemDetailsHono,
  typeof problemDetailsOpenapi,
  typeof problemDetailsExpress,
  typeof problemDetailsFastify,
  typeof rateLimit,
  typeof rateLimitRedis,
  typeof rateLimitHono,
  typeof rateLimitExpress,
  typeof rateLimitFastify,
  typeof requestGuards,
  typeof requestGuardsHono,
  typeof requestGuardsNode,
  typeof requestGuardsExpress,
  typeof requestGuardsFastify,
  typeof sortAllowlist,
  typeof sortAllowlistZod,
  typeof webhookDelivery,
  typeof webhookDeliveryPrometheus,
  typeof webhookDeliveryOpenapi,
  typeof webhookSigner,
  typeof webhookVerifier,
  typeof webhookVerifierV1,
  typeof webhookVerifierReceiver,
  typeof webhookVerifierPostgres,
  typeof webhookVerifierHono,
  typeof webhookVerifierExpress,
  typeof webhookVerifierFastify,
];
