import { describe, expect, it } from 'vitest';
import { diffDocuments, type Json } from '../diff';
import type { RuleId } from '../rules';

// The rule table of the contract check (issue 18): for each rule of SPEC 9.4 and of the issue,
// a (before, after) pair the check must fail with that rule, and additive pairs it must pass.
// Each pair is a small edit of one document, so a row tests exactly one change.

type Doc = { [key: string]: Json };

function base(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Order: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            status: { type: 'string', enum: ['pending', 'shipped'] },
            total: { type: 'integer', format: 'int64' },
            description: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          },
          required: ['id', 'status', 'total', 'description'],
        },
        UpdateOrder: {
          type: 'object',
          properties: {
            description: { type: 'string', maxLength: 1000 },
            status: { type: 'string', enum: ['pending', 'shipped'] },
            tags: { type: 'array', items: { type: 'string' }, minItems: 0 },
            code: { type: 'string' },
            quantity: { type: 'integer', minimum: 1, maximum: 100 },
          },
          additionalProperties: false,
        },
        Note: { type: 'object', properties: { text: { type: 'string' } } },
      },
    },
    paths: {
      '/v1/orders': {
        get: {
          parameters: [
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', maximum: 100 } },
          ],
          responses: {
            '200': {
              description: 'ok',
              headers: { ETag: { schema: { type: 'string' } } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
            '404': { description: 'missing' },
          },
        },
        patch: {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/UpdateOrder' } } },
          },
          responses: { '200': { description: 'ok' } },
        },
        post: {
          requestBody: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Note' } } },
          },
          responses: { '200': { description: 'ok' } },
        },
      },
      '/v1/orders/{id}/cancel': { post: { responses: { '200': { description: 'ok' } } } },
    },
    webhooks: {
      'order.created': {
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    type: { type: 'string', enum: ['order.created'] },
                    data: { $ref: '#/components/schemas/Order' },
                  },
                  required: ['type', 'data'],
                },
              },
            },
          },
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  };
}

/** `base()` after `edit`, through any path of plain objects and arrays. */
function changed(edit: (doc: Doc) => void): Doc {
  const doc = base();
  edit(doc);
  return doc;
}

// biome-ignore lint/suspicious/noExplicitAny: the table edits documents by path, as JSON
const at = (doc: Doc, ...path: (string | number)[]): any => path.reduce<any>((node, key) => node[key], doc);
const order = (doc: Doc) => at(doc, 'components', 'schemas', 'Order');
const update = (doc: Doc) => at(doc, 'components', 'schemas', 'UpdateOrder');

const BREAKING: ReadonlyArray<[string, RuleId, (doc: Doc) => void]> = [
  ['a path removed', 'removed', (d) => delete at(d, 'paths')['/v1/orders/{id}/cancel']],
  [
    'a path renamed',
    'removed',
    (d) => {
      const paths = at(d, 'paths');
      paths['/v1/orders/{id}/void'] = paths['/v1/orders/{id}/cancel'];
      delete paths['/v1/orders/{id}/cancel'];
    },
  ],
  ['an operation removed', 'removed', (d) => delete at(d, 'paths', '/v1/orders').patch],
  [
    'a response status removed',
    'removed',
    (d) => delete at(d, 'paths', '/v1/orders', 'get', 'responses')['404'],
  ],
  [
    'a response field removed',
    'removed',
    (d) => {
      delete order(d).properties.description;
      order(d).required = ['id', 'status', 'total'];
    },
  ],
  [
    'a response field renamed',
    'removed',
    (d) => {
      order(d).properties.amount = order(d).properties.total;
      delete order(d).properties.total;
    },
  ],
  [
    'a response field no longer required',
    'removed',
    (d) => (order(d).required = ['id', 'status', 'description']),
  ],
  [
    'a response header removed',
    'removed',
    (d) => delete at(d, 'paths', '/v1/orders', 'get', 'responses', '200').headers.ETag,
  ],
  [
    'a response media type removed',
    'removed',
    (d) => (at(d, 'paths', '/v1/orders', 'get', 'responses', '200').content = {}),
  ],
  [
    'a response field type changed',
    'type',
    (d) => (order(d).properties.total = { type: 'string', format: 'int64' }),
  ],
  ['a response field format changed', 'type', (d) => (order(d).properties.total.format = 'int32')],
  [
    'a response field made non-nullable',
    'type',
    (d) => (order(d).properties.description = { type: 'string' }),
  ],
  ['a response field made nullable', 'type', (d) => (order(d).properties.id = { type: ['string', 'null'] })],
  ['a request field type changed', 'type', (d) => (update(d).properties.quantity.type = 'number')],
  [
    'a request field made non-nullable',
    'type',
    (d) => {
      update(d).properties.code = { anyOf: [{ type: 'string' }, { type: 'null' }] };
    },
  ],
  ['a request field newly required', 'required', (d) => (update(d).required = ['description'])],
  [
    'a required request field added',
    'required',
    (d) => {
      update(d).properties.plan = { type: 'string' };
      update(d).required = ['plan'];
    },
  ],
  [
    'a parameter added as required',
    'required',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get').parameters.push({
        name: 'q',
        in: 'query',
        required: true,
        schema: { type: 'string' },
      });
    },
  ],
  [
    'a parameter made required',
    'required',
    (d) => (at(d, 'paths', '/v1/orders', 'get', 'parameters', 0).required = true),
  ],
  [
    'an optional request body made required',
    'required',
    (d) => (at(d, 'paths', '/v1/orders', 'post', 'requestBody').required = true),
  ],
  [
    'a required body added where there was none',
    'required',
    (d) => {
      at(d, 'paths', '/v1/orders/{id}/cancel', 'post').requestBody = {
        required: true,
        content: { 'application/json': { schema: { type: 'object' } } },
      };
    },
  ],
  ['a response enum value removed', 'meaning', (d) => (order(d).properties.status.enum = ['pending'])],
  ['a request enum value removed', 'tightened', (d) => (update(d).properties.status.enum = ['pending'])],
  ['a request field limited to an enum', 'tightened', (d) => (update(d).properties.code.enum = ['a', 'b'])],
  ['a request maxLength lowered', 'tightened', (d) => (update(d).properties.description.maxLength = 500)],
  ['a request maximum lowered', 'tightened', (d) => (update(d).properties.quantity.maximum = 10)],
  [
    'a request parameter maximum lowered',
    'tightened',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get', 'parameters', 0).schema.maximum = 50;
    },
  ],
  ['a request minimum raised', 'tightened', (d) => (update(d).properties.quantity.minimum = 2)],
  ['a request pattern added', 'tightened', (d) => (update(d).properties.code.pattern = '^[a-z]+$')],
  ['a request minItems raised', 'tightened', (d) => (update(d).properties.tags.minItems = 1)],
  [
    'a request object closed',
    'tightened',
    (d) => (at(d, 'components', 'schemas', 'Note').additionalProperties = false),
  ],
  ['a request field removed from a closed object', 'removed', (d) => delete update(d).properties.code],
  [
    'a security scope required',
    'security',
    (d) => (at(d, 'paths', '/v1/orders', 'get').security = [{ bearerAuth: ['orders:read'] }]),
  ],
  [
    'a public operation secured',
    'security',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get').security = [{ bearerAuth: [] }];
      const cancel = at(d, 'paths', '/v1/orders/{id}/cancel', 'post');
      cancel.security = [{ bearerAuth: [], apiKey: [] }];
    },
  ],
  [
    'a security scheme changed',
    'security',
    (d) => (at(d, 'components', 'securitySchemes', 'bearerAuth').scheme = 'basic'),
  ],
  ['a webhook removed', 'removed', (d) => delete at(d, 'webhooks')['order.created']],
  [
    'a webhook payload field removed (payloads are a response contract)',
    'removed',
    (d) => {
      const payload = at(
        d,
        'webhooks',
        'order.created',
        'post',
        'requestBody',
        'content',
        'application/json',
        'schema',
      );
      delete payload.properties.type;
      payload.required = ['data'];
    },
  ],
  ['a field removed from a resource a webhook carries', 'removed', (d) => delete order(d).properties.id],
  [
    'a webhook payload enum value removed',
    'meaning',
    (d) => {
      at(
        d,
        'webhooks',
        'order.created',
        'post',
        'requestBody',
        'content',
        'application/json',
        'schema',
      ).properties.type.enum = [];
    },
  ],
];

const ADDITIVE: ReadonlyArray<[string, (doc: Doc) => void]> = [
  [
    'a new path',
    (d) => (at(d, 'paths')['/v1/refunds'] = { get: { responses: { '200': { description: 'ok' } } } }),
  ],
  [
    'a new operation',
    (d) => (at(d, 'paths', '/v1/orders').delete = { responses: { '204': { description: 'gone' } } }),
  ],
  ['a new optional request field', (d) => (update(d).properties.note = { type: 'string' })],
  [
    'a new optional parameter',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get').parameters.push({
        name: 'q',
        in: 'query',
        schema: { type: 'string' },
      });
    },
  ],
  ['a new response field', (d) => (order(d).properties.currency = { type: 'string' })],
  [
    'a new response status',
    (d) => (at(d, 'paths', '/v1/orders', 'get', 'responses')['429'] = { description: 'slow down' }),
  ],
  [
    'a new response header',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get', 'responses', '200').headers['Retry-After'] = {
        schema: { type: 'integer' },
      };
    },
  ],
  [
    'a new event type (response enum value)',
    (d) => (order(d).properties.status.enum = ['pending', 'shipped', 'cancelled']),
  ],
  [
    'a new accepted request enum value',
    (d) => (update(d).properties.status.enum = ['pending', 'shipped', 'cancelled']),
  ],
  [
    'a new webhook',
    (d) => {
      const webhooks = at(d, 'webhooks');
      webhooks['order.deleted'] = webhooks['order.created'];
    },
  ],
  ['a request constraint loosened', (d) => (update(d).properties.description.maxLength = 2000)],
  [
    'a required field inside allOf kept the same',
    (d) => {
      at(d, 'paths', '/v1/orders', 'get', 'responses', '200', 'content', 'application/json').schema = {
        allOf: [
          { $ref: '#/components/schemas/Order' },
          { properties: { status: { enum: ['pending', 'shipped', 'x'] } } },
        ],
      };
    },
  ],
  ['a scope requirement dropped', (d) => (at(d, 'paths', '/v1/orders', 'get').security = [{}])],
];

describe('the contract check fails every breaking change, naming its rule', () => {
  it.each(BREAKING)('%s', (_name, rule, edit) => {
    const findings = diffDocuments(base(), changed(edit));
    const breaking = findings.filter((f) => f.kind === 'breaking');
    expect(breaking.map((f) => f.rule)).toContain(rule);
    for (const f of breaking) {
      expect(f.path).toMatch(/^\$\./);
      expect(f.operation).not.toBe('');
    }
  });
});

describe('the contract check passes additive changes with a summary', () => {
  it.each(ADDITIVE)('%s', (_name, edit) => {
    const findings = diffDocuments(base(), changed(edit));
    expect(findings.filter((f) => f.kind === 'breaking')).toEqual([]);
  });

  it('reports something for every additive row except no-ops', () => {
    expect(diffDocuments(base(), changed(ADDITIVE[0]?.[1] ?? (() => {})))).not.toEqual([]);
    expect(diffDocuments(base(), base())).toEqual([]);
  });
});

describe('direction matters: the same edit breaks one side and not the other', () => {
  it('a new enum value is additive in both directions, a removed one breaks both', () => {
    const responseRemoved = diffDocuments(
      base(),
      changed((d) => (order(d).properties.status.enum = ['pending'])),
    );
    const requestRemoved = diffDocuments(
      base(),
      changed((d) => (update(d).properties.status.enum = ['pending'])),
    );
    expect(responseRemoved.find((f) => f.kind === 'breaking')?.rule).toBe('meaning');
    expect(requestRemoved.find((f) => f.kind === 'breaking')?.rule).toBe('tightened');
  });

  it('a lower maxLength breaks a request but not a response', () => {
    const response = diffDocuments(
      base(),
      changed((d) => (order(d).properties.id.maxLength = 10)),
    );
    const request = diffDocuments(
      base(),
      changed((d) => (update(d).properties.description.maxLength = 10)),
    );
    expect(response.filter((f) => f.kind === 'breaking')).toEqual([]);
    expect(request.filter((f) => f.kind === 'breaking').map((f) => f.rule)).toEqual(['tightened']);
  });

  it('a removed field breaks a response, and a request only when the object is closed', () => {
    const closed = diffDocuments(
      base(),
      changed((d) => delete update(d).properties.code),
    );
    const open = diffDocuments(
      base(),
      changed((d) => delete at(d, 'components', 'schemas', 'Note').properties.text),
    );
    expect(closed.filter((f) => f.kind === 'breaking').map((f) => f.rule)).toEqual(['removed']);
    expect(open.filter((f) => f.kind === 'breaking')).toEqual([]);
  });

  it('a new required field breaks a request but is additive in a response', () => {
    const response = diffDocuments(
      base(),
      changed((d) => {
        order(d).properties.currency = { type: 'string' };
        order(d).required.push('currency');
      }),
    );
    expect(response.filter((f) => f.kind === 'breaking')).toEqual([]);
  });

  it('names the operation and the JSON path of a removed order field', () => {
    const [finding] = diffDocuments(
      base(),
      changed((d) => delete order(d).properties.description),
    ).filter((f) => f.kind === 'breaking');
    expect(finding).toMatchObject({
      rule: 'removed',
      operation: 'GET /v1/orders',
      path: '$.paths["/v1/orders"].get.responses["200"].content["application/json"].schema.properties.description',
    });
  });
});
