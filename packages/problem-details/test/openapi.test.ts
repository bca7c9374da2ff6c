import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { holdfastDefinitions } from '../src/catalogue';
import { onProblem } from '../src/hono';
import { problem } from '../src/index';
import {
  type JsonObject,
  narrowProblemCodes,
  problemResponsesFor,
  problemSchema,
  strictQueries,
  validationHook,
} from '../src/openapi';
import { problemCodes } from '../src/openapi-codes';

const definitions = {
  ...holdfastDefinitions,
  refund_exceeds_amount: { status: 422, title: 'Refund exceeds the refundable amount' },
} as const;

describe('problemResponsesFor', () => {
  it('declares each status with its description, overrides and the statuses every operation answers', () => {
    const responses = problemResponsesFor({ always: [500] })([404, 422], {
      422: 'refund_exceeds_amount: too much.',
    });
    expect(Object.keys(responses)).toEqual(['404', '422', '500']);
    expect(responses[404]?.description).toMatch(/^not_found/);
    expect(responses[422]?.description).toBe('refund_exceeds_amount: too much.');
    expect(responses[500]?.content['application/problem+json'].schema).toBe(problemSchema);
  });

  it('validates what ProblemError writes', () => {
    const body = problem('not_found').toJSON({ instance: '/v1/orders/x', requestId: 'req_1' });
    expect(problemSchema.safeParse(body).success).toBe(true);
  });
});

describe('problemCodes', () => {
  const options = { definitions };
  it.each([
    [422, 'refund_exceeds_amount: too much.', ['refund_exceeds_amount']],
    [422, 'Well-formed but refused.', ['unprocessable', 'refund_exceeds_amount']],
    [404, 'Absent.', ['not_found']],
  ])('%i %j is %j', (status, description, codes) => {
    expect(problemCodes(status, description, options)).toEqual(codes);
  });

  it('adds the implied codes and ignores named ones where told', () => {
    const codes = problemCodes(400, 'invalid_json or unknown_field', {
      definitions,
      implied: () => ['validation_failed'],
      named: (status) => status !== 400,
    });
    expect(codes).toEqual(['validation_failed']);
  });

  it('narrows each problem+json response of an operation and leaves the rest alone', () => {
    const responses: JsonObject = {
      200: { description: 'ok', content: { 'application/json': { schema: {} } } },
      404: { description: 'not_found', content: { 'application/problem+json': { schema: {} } } },
    };
    narrowProblemCodes(responses, { definitions });
    expect(responses[200]).toEqual({ description: 'ok', content: { 'application/json': { schema: {} } } });
    expect(JSON.stringify(responses[404])).toContain('"enum":["not_found"]');
    expect(JSON.stringify(responses[404])).toContain('#/components/schemas/Problem');
  });
});

describe('validationHook', () => {
  const route = createRoute({
    method: 'post',
    path: '/orders',
    request: {
      query: z.strictObject({ limit: z.string().optional() }),
      body: {
        required: true,
        content: { 'application/json': { schema: z.strictObject({ amount: z.number() }) } },
      },
    },
    responses: { 200: { description: 'ok' } },
  });
  const app = new OpenAPIHono({
    defaultHook: validationHook<{ req: { method: string; header(name: string): string | undefined } }>({
      body: (c) =>
        c.req.header('content-type') === undefined
          ? problem('validation_failed', { detail: 'none' })
          : undefined,
    }),
  });
  app.onError(onProblem());
  app.openapi(route, (c) => c.json(c.req.valid('json'), 200));
  const post = (query: string, body: string) =>
    app.request(`/orders${query}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  it('names unknown fields and failed ones', async () => {
    const unknown = await (await post('', '{"amount":1,"colour":"red"}')).json();
    expect(unknown).toMatchObject({
      code: 'unknown_field',
      errors: [{ field: 'colour', pointer: '#/colour' }],
    });
    const wrong = await (await post('', '{"amount":"1"}')).json();
    expect(wrong).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'amount', code: 'invalid_type' }],
    });
  });

  it('names a repeated query parameter', async () => {
    const repeated = await (await post('?limit=1&limit=2', '{"amount":1}')).json();
    expect(repeated.errors).toEqual([
      { field: 'limit', code: 'repeated', detail: 'given 2 times; give it once' },
    ]);
  });

  it('answers the body option instead when it says so', async () => {
    // Without a JSON Content-Type, Hono validates {} as the body.
    const response = await app.request('/orders', { method: 'POST' });
    expect(await response.json()).toMatchObject({ code: 'validation_failed', detail: 'none' });
  });
});

describe('strictQueries', () => {
  it('refuses an unknown query parameter on a route that declares no query', async () => {
    const strict = new OpenAPIHono({ defaultHook: validationHook() });
    strict.onError(onProblem());
    strictQueries(strict);
    strict.openapi(
      createRoute({ method: 'get', path: '/orders/{id}', responses: { 200: { description: 'ok' } } }),
      (c) => c.json({}, 200),
    );
    expect((await strict.request('/orders/ord_1')).status).toBe(200);
    const refused = await strict.request('/orders/ord_1?expand=x');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'unknown_field', errors: [{ field: 'expand' }] });
  });
});
