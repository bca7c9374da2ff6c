import type { Finding, RuleId } from './rules';

// A focused OpenAPI 3.1 diff over resolved schemas: only the rules of ./rules.ts, each tested by
// a (before, after) pair in ./test/contract-diff.test.ts. Requests and responses are compared in
// their own directions: a request may accept more and a response may say more, never the reverse.

/** JSON as parsed from a document. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Direction = 'request' | 'response';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});
const arrayAt = (value: Json | undefined): Json[] => (Array.isArray(value) ? value : []);
const stringsAt = (value: Json | undefined): string[] =>
  arrayAt(value).filter((v): v is string => typeof v === 'string');
const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`);
const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

/** Follows a local `$ref` (`#/components/...`); anything else is returned as it is. */
function resolve(
  root: JsonObject,
  node: Json | undefined,
  seen: ReadonlySet<string> = new Set(),
): Json | undefined {
  if (!isObject(node) || typeof node.$ref !== 'string' || !node.$ref.startsWith('#/')) return node;
  if (seen.has(node.$ref)) return node;
  let target: Json | undefined = root;
  for (const part of node.$ref.slice(2).split('/')) {
    target = objectAt(target)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return resolve(root, target, new Set([...seen, node.$ref]));
}

/**
 * `allOf` merged into one schema (properties merged member by member, `required` united), so
 * `allOf: [Problem, { code enum }]` compares with a plain `Problem` field by field.
 */
function flatten(root: JsonObject, node: Json | undefined, depth = 0): Json | undefined {
  const schema = resolve(root, node);
  if (!isObject(schema) || !Array.isArray(schema.allOf) || depth > 10) return schema;
  const { allOf, ...own } = schema;
  const merged: JsonObject = {};
  const properties: JsonObject = {};
  const required = new Set<string>();
  for (const member of [...allOf, own]) {
    const part = objectAt(flatten(root, member, depth + 1));
    for (const [name, value] of Object.entries(part)) {
      if (name === 'properties') {
        for (const [prop, sub] of Object.entries(objectAt(value)))
          properties[prop] = {
            ...objectAt(resolve(root, properties[prop])),
            ...objectAt(resolve(root, sub)),
          };
      } else if (name === 'required') for (const r of stringsAt(value)) required.add(r);
      else merged[name] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

class Differ {
  readonly findings: Finding[] = [];
  constructor(
    private readonly before: JsonObject,
    private readonly after: JsonObject,
  ) {}

  breaking(rule: RuleId, operation: string, path: string, detail: string): void {
    this.findings.push({ kind: 'breaking', rule, operation, path, detail });
  }

  additive(operation: string, path: string, detail: string): void {
    this.findings.push({ kind: 'additive', operation, path, detail });
  }

  run(): Finding[] {
    const before = objectAt(this.before.paths);
    const after = objectAt(this.after.paths);
    for (const [path, item] of Object.entries(before)) {
      const where = `$.paths${key(path)}`;
      if (!(path in after)) {
        this.breaking('removed', path, where, `path ${path} removed`);
        continue;
      }
      this.pathItem(
        path,
        where,
        objectAt(resolve(this.before, item)),
        objectAt(resolve(this.after, after[path])),
      );
    }
    for (const path of Object.keys(after))
      if (!(path in before)) this.additive(path, `$.paths${key(path)}`, `new path ${path}`);
    this.webhooks();
    this.securitySchemes();
    return this.findings;
  }

  private pathItem(
    path: string,
    where: string,
    before: JsonObject,
    after: JsonObject,
    webhook = false,
  ): void {
    for (const method of METHODS) {
      const name = webhook ? `webhook ${path}` : `${method.toUpperCase()} ${path}`;
      if (!isObject(before[method])) {
        if (isObject(after[method])) this.additive(name, `${where}.${method}`, `new operation ${name}`);
        continue;
      }
      if (!isObject(after[method])) {
        this.breaking('removed', name, `${where}.${method}`, `operation ${name} removed`);
        continue;
      }
      const shared = { before: arrayAt(before.parameters), after: arrayAt(after.parameters) };
      this.operation(
        name,
        `${where}.${method}`,
        objectAt(before[method]),
        objectAt(after[method]),
        shared,
        webhook,
      );
    }
  }

  private operation(
    name: string,
    where: string,
    before: JsonObject,
    after: JsonObject,
    shared: { before: Json[]; after: Json[] },
    webhook: boolean,
  ): void {
    // A webhook is the server's request to the receiver: its payload and headers are what the
    // server promises, so they are held to the response rules.
    const input: Direction = webhook ? 'response' : 'request';
    this.parameters(
      name,
      where,
      [...shared.before, ...arrayAt(before.parameters)],
      [...shared.after, ...arrayAt(after.parameters)],
      input,
    );
    this.requestBody(name, `${where}.requestBody`, before.requestBody, after.requestBody, input);
    const responsesBefore = objectAt(before.responses);
    const responsesAfter = objectAt(after.responses);
    for (const [status, response] of Object.entries(responsesBefore)) {
      const at = `${where}.responses${key(status)}`;
      if (!(status in responsesAfter)) {
        this.breaking('removed', name, at, `response ${status} removed`);
        continue;
      }
      this.response(
        name,
        at,
        objectAt(resolve(this.before, response)),
        objectAt(resolve(this.after, responsesAfter[status])),
      );
    }
    for (const status of Object.keys(responsesAfter))
      if (!(status in responsesBefore))
        this.additive(name, `${where}.responses${key(status)}`, `new response ${status}`);
    if (!webhook)
      this.security(
        name,
        `${where}.security`,
        before.security ?? this.before.security,
        after.security ?? this.after.security,
      );
  }

  private parameters(name: string, where: string, before: Json[], after: Json[], direction: Direction): void {
    const index = (list: Json[], root: JsonObject) => {
      const map = new Map<string, JsonObject>();
      for (const item of list) {
        const p = objectAt(resolve(root, item));
        map.set(`${String(p.in)}:${String(p.name).toLowerCase()}`, p);
      }
      return map;
    };
    const b = index(before, this.before);
    const a = index(after, this.after);
    for (const [id, p] of b) {
      const at = `${where}.parameters[${JSON.stringify(id)}]`;
      const next = a.get(id);
      if (!next) {
        // A request parameter the server stops taking is refused (400 unknown_field) when sent.
        this.breaking('removed', name, at, `parameter ${p.name} (${p.in}) removed`);
        continue;
      }
      if (direction === 'request' && p.required !== true && next.required === true)
        this.breaking('required', name, at, `parameter ${p.name} (${p.in}) is now required`);
      if (direction === 'response' && p.required === true && next.required !== true)
        this.breaking('removed', name, at, `header ${p.name} is no longer always sent`);
      if (!same(p.style, next.style) || !same(p.explode, next.explode))
        this.breaking(
          'type',
          name,
          at,
          `parameter ${p.name} (${p.in}) changed its serialisation (style/explode)`,
        );
      this.schema(name, `${at}.schema`, p.schema, next.schema, direction);
    }
    for (const [id, p] of a) {
      if (b.has(id)) continue;
      const at = `${where}.parameters[${JSON.stringify(id)}]`;
      if (direction === 'request' && p.required === true)
        this.breaking('required', name, at, `new required parameter ${p.name} (${p.in})`);
      else this.additive(name, at, `new optional parameter ${p.name} (${p.in})`);
    }
  }

  private requestBody(
    name: string,
    where: string,
    rawBefore: Json | undefined,
    rawAfter: Json | undefined,
    direction: Direction,
  ): void {
    const before = resolve(this.before, rawBefore);
    const after = resolve(this.after, rawAfter);
    if (!isObject(before)) {
      if (isObject(after) && after.required === true && direction === 'request')
        this.breaking('required', name, where, 'a required request body was added');
      else if (isObject(after)) this.additive(name, where, 'new optional request body');
      return;
    }
    if (!isObject(after)) {
      this.breaking('removed', name, where, 'request body removed');
      return;
    }
    if (direction === 'request' && before.required !== true && after.required === true)
      this.breaking('required', name, where, 'the request body is now required');
    this.content(name, `${where}.content`, objectAt(before.content), objectAt(after.content), direction);
  }

  private response(name: string, where: string, before: JsonObject, after: JsonObject): void {
    const headersBefore = objectAt(before.headers);
    const headersAfter = objectAt(after.headers);
    const lower = new Map(Object.entries(headersAfter).map(([h, v]) => [h.toLowerCase(), v]));
    for (const [header, value] of Object.entries(headersBefore)) {
      const at = `${where}.headers${key(header)}`;
      const next = lower.get(header.toLowerCase());
      if (next === undefined) {
        this.breaking('removed', name, at, `response header ${header} removed`);
        continue;
      }
      const b = objectAt(resolve(this.before, value));
      const a = objectAt(resolve(this.after, next));
      if (b.required === true && a.required !== true)
        this.breaking('removed', name, at, `response header ${header} is no longer always sent`);
      this.schema(name, `${at}.schema`, b.schema, a.schema, 'response');
    }
    for (const header of Object.keys(headersAfter))
      if (!Object.keys(headersBefore).some((h) => h.toLowerCase() === header.toLowerCase()))
        this.additive(name, `${where}.headers${key(header)}`, `new response header ${header}`);
    this.content(name, `${where}.content`, objectAt(before.content), objectAt(after.content), 'response');
  }

  private content(
    name: string,
    where: string,
    before: JsonObject,
    after: JsonObject,
    direction: Direction,
  ): void {
    for (const [media, value] of Object.entries(before)) {
      const at = `${where}${key(media)}`;
      if (!(media in after)) {
        this.breaking('removed', name, at, `media type ${media} removed`);
        continue;
      }
      this.schema(name, `${at}.schema`, objectAt(value).schema, objectAt(after[media]).schema, direction);
    }
    for (const media of Object.keys(after))
      if (!(media in before)) this.additive(name, `${where}${key(media)}`, `new media type ${media}`);
  }

  private schema(
    name: string,
    where: string,
    rawBefore: Json | undefined,
    rawAfter: Json | undefined,
    direction: Direction,
    depth = 0,
  ): void {
    if (depth > 40) return;
    const before = shape(flatten(this.before, rawBefore));
    const after = shape(flatten(this.after, rawAfter));
    if (!before.schema || !after.schema) return;
    const b = before.schema;
    const a = after.schema;
    const what = `${direction} ${where.includes('.properties') ? 'field' : 'value'}`;

    if (!same(before.types, after.types))
      this.breaking(
        'type',
        name,
        where,
        `${what} type changed from ${before.types.join('|') || 'any'} to ${after.types.join('|') || 'any'}`,
      );
    if (before.nullable !== after.nullable)
      this.breaking(
        'type',
        name,
        where,
        `${what} ${after.nullable ? 'became nullable' : 'is no longer nullable'}`,
      );
    if (!same(b.format, a.format))
      this.breaking(
        'type',
        name,
        where,
        `${what} format changed from ${String(b.format ?? 'none')} to ${String(a.format ?? 'none')}`,
      );

    // Closed sets: a value that existed and is gone breaks both directions; a new value is additive
    // (a new event type or problem code: clients ignore values they do not know, SPEC 9.5).
    if (Array.isArray(b.enum) || Array.isArray(a.enum)) {
      const valuesBefore = arrayAt(b.enum).map((v) => JSON.stringify(v));
      const valuesAfter = arrayAt(a.enum).map((v) => JSON.stringify(v));
      if (!Array.isArray(b.enum) && Array.isArray(a.enum) && direction === 'request')
        this.breaking('tightened', name, where, `request value is now limited to ${valuesAfter.join(', ')}`);
      if (Array.isArray(b.enum) && Array.isArray(a.enum)) {
        for (const value of valuesBefore)
          if (!valuesAfter.includes(value))
            this.breaking(
              direction === 'request' ? 'tightened' : 'meaning',
              name,
              where,
              `${direction} enum value ${value} removed`,
            );
        for (const value of valuesAfter)
          if (!valuesBefore.includes(value))
            this.additive(name, where, `new ${direction} enum value ${value}`);
      }
    }
    if ('const' in b && !same(b.const, a.const))
      this.breaking(
        'meaning',
        name,
        where,
        `constant ${JSON.stringify(b.const)} changed to ${JSON.stringify(a.const)}`,
      );

    if (direction === 'request') this.constraints(name, where, b, a);

    // Objects.
    const propsBefore = objectAt(b.properties);
    const propsAfter = objectAt(a.properties);
    const requiredBefore = stringsAt(b.required);
    const requiredAfter = stringsAt(a.required);
    for (const [prop, value] of Object.entries(propsBefore)) {
      const at = `${where}.properties${key(prop)}`;
      if (!(prop in propsAfter)) {
        if (direction === 'response') this.breaking('removed', name, at, `response field ${prop} removed`);
        else if (a.additionalProperties === false)
          this.breaking('removed', name, at, `request field ${prop} removed (now refused as unknown)`);
        continue;
      }
      if (direction === 'response' && requiredBefore.includes(prop) && !requiredAfter.includes(prop))
        this.breaking('removed', name, at, `response field ${prop} is no longer always present`);
      if (direction === 'request' && !requiredBefore.includes(prop) && requiredAfter.includes(prop))
        this.breaking('required', name, at, `request field ${prop} is now required`);
      this.schema(name, at, value, propsAfter[prop], direction, depth + 1);
    }
    for (const prop of Object.keys(propsAfter)) {
      if (prop in propsBefore) continue;
      const at = `${where}.properties${key(prop)}`;
      if (direction === 'request' && requiredAfter.includes(prop))
        this.breaking('required', name, at, `new required request field ${prop}`);
      else
        this.additive(
          name,
          at,
          `new ${direction === 'request' ? 'optional request' : 'response'} field ${prop}`,
        );
    }
    if (
      direction === 'request' &&
      b.additionalProperties !== false &&
      a.additionalProperties === false &&
      Object.keys(propsBefore).length > 0
    )
      this.breaking(
        'tightened',
        name,
        `${where}.additionalProperties`,
        'request object closed (additionalProperties: false)',
      );
    if (isObject(b.additionalProperties) && isObject(a.additionalProperties))
      this.schema(
        name,
        `${where}.additionalProperties`,
        b.additionalProperties,
        a.additionalProperties,
        direction,
        depth + 1,
      );

    // Arrays and compositions.
    if (b.items !== undefined && a.items !== undefined)
      this.schema(name, `${where}.items`, b.items, a.items, direction, depth + 1);
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      const listBefore = arrayAt(b[keyword]);
      const listAfter = arrayAt(a[keyword]);
      listBefore.forEach((item, i) => {
        if (i < listAfter.length)
          this.schema(name, `${where}.${keyword}[${i}]`, item, listAfter[i], direction, depth + 1);
      });
      if (keyword !== 'allOf' && direction === 'request' && listAfter.length < listBefore.length)
        this.breaking(
          'tightened',
          name,
          `${where}.${keyword}`,
          `request alternatives reduced from ${listBefore.length} to ${listAfter.length}`,
        );
      if (keyword !== 'allOf' && direction === 'response' && listAfter.length > listBefore.length)
        this.breaking(
          'type',
          name,
          `${where}.${keyword}`,
          `response alternatives grew from ${listBefore.length} to ${listAfter.length}`,
        );
    }
  }

  /** Request constraints may only loosen: each narrowing is a tightened validation. */
  private constraints(name: string, where: string, b: JsonObject, a: JsonObject): void {
    const num = (v: Json | undefined) => (typeof v === 'number' ? v : undefined);
    const upper = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];
    const lower = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
    for (const bound of upper) {
      const was = num(b[bound]);
      const now = num(a[bound]);
      if (now !== undefined && (was === undefined || now < was))
        this.breaking(
          'tightened',
          name,
          `${where}.${bound}`,
          `request ${bound} narrowed from ${was ?? 'none'} to ${now}`,
        );
    }
    for (const bound of lower) {
      const was = num(b[bound]);
      const now = num(a[bound]);
      if (now !== undefined && (was === undefined || now > was))
        this.breaking(
          'tightened',
          name,
          `${where}.${bound}`,
          `request ${bound} narrowed from ${was ?? 'none'} to ${now}`,
        );
    }
    if (a.pattern !== undefined && !same(b.pattern, a.pattern))
      this.breaking(
        'tightened',
        name,
        `${where}.pattern`,
        `request pattern ${b.pattern === undefined ? 'added' : 'changed'}: ${String(a.pattern)}`,
      );
    if (a.uniqueItems === true && b.uniqueItems !== true)
      this.breaking('tightened', name, `${where}.uniqueItems`, 'request items must now be unique');
    if (a.multipleOf !== undefined && !same(b.multipleOf, a.multipleOf))
      this.breaking(
        'tightened',
        name,
        `${where}.multipleOf`,
        `request multipleOf is now ${String(a.multipleOf)}`,
      );
  }

  /** Every way a client could authenticate before must still work (same or fewer schemes and scopes). */
  private security(name: string, where: string, before: Json | undefined, after: Json | undefined): void {
    const alternatives = (value: Json | undefined) =>
      value === undefined ? [{}] : arrayAt(value).map((req) => objectAt(req));
    const b = alternatives(before);
    const a = alternatives(after);
    for (const old of b) {
      const kept = a.some((alt) =>
        Object.entries(alt).every(
          ([scheme, scopes]) =>
            scheme in old && stringsAt(scopes).every((scope) => stringsAt(old[scheme]).includes(scope)),
        ),
      );
      if (!kept) {
        const text =
          Object.entries(old)
            .map(([s, scopes]) => `${s}[${stringsAt(scopes).join(' ')}]`)
            .join(' + ') || 'no credentials';
        this.breaking('security', name, where, `requests authenticated with ${text} are no longer accepted`);
      }
    }
  }

  private securitySchemes(): void {
    const before = objectAt(objectAt(this.before.components).securitySchemes);
    const after = objectAt(objectAt(this.after.components).securitySchemes);
    for (const [scheme, value] of Object.entries(before)) {
      const at = `$.components.securitySchemes${key(scheme)}`;
      const next = after[scheme];
      if (next === undefined) {
        this.breaking('security', 'document', at, `security scheme ${scheme} removed`);
        continue;
      }
      const b = objectAt(value);
      const a = objectAt(next);
      for (const field of ['type', 'scheme', 'in', 'name', 'bearerFormat'])
        if (!same(b[field], a[field]))
          this.breaking(
            'security',
            'document',
            `${at}.${field}`,
            `security scheme ${scheme} changed its ${field}`,
          );
    }
  }

  private webhooks(): void {
    const before = objectAt(this.before.webhooks);
    const after = objectAt(this.after.webhooks);
    for (const [hook, item] of Object.entries(before)) {
      const where = `$.webhooks${key(hook)}`;
      if (!(hook in after)) {
        this.breaking('removed', `webhook ${hook}`, where, `webhook ${hook} removed`);
        continue;
      }
      this.pathItem(
        hook,
        where,
        objectAt(resolve(this.before, item)),
        objectAt(resolve(this.after, after[hook])),
        true,
      );
    }
    for (const hook of Object.keys(after))
      if (!(hook in before))
        this.additive(`webhook ${hook}`, `$.webhooks${key(hook)}`, `new webhook ${hook}`);
  }
}

/** A schema split into its non-null part, its types and whether it admits null. */
function shape(node: Json | undefined): {
  schema: JsonObject | undefined;
  types: string[];
  nullable: boolean;
} {
  if (!isObject(node)) return { schema: undefined, types: [], nullable: false };
  let schema = node;
  let nullable = false;
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const list = arrayAt(node[keyword]);
    const rest = list.filter((item) => !(isObject(item) && item.type === 'null'));
    if (rest.length < list.length) {
      nullable = true;
      const { [keyword]: _dropped, ...others } = node;
      schema =
        rest.length === 1 && isObject(rest[0]) ? { ...rest[0], ...others } : { ...others, [keyword]: rest };
    }
  }
  const raw = typeof schema.type === 'string' ? [schema.type] : stringsAt(schema.type);
  if (raw.includes('null') || schema.nullable === true) nullable = true;
  return { schema, types: raw.filter((t) => t !== 'null').sort(), nullable };
}

/**
 * Compares a published OpenAPI 3.1 document with a new one: every breaking change by the rules
 * of SPEC section 9 (./rules.ts), each naming the operation and the JSON path, and every additive
 * change for the summary.
 *
 * @example
 * ```ts
 * const findings = diffDocuments(published, current);
 * const broken = findings.filter((f) => f.kind === 'breaking');
 * ```
 */
export function diffDocuments(before: Json, after: Json): Finding[] {
  return new Differ(objectAt(before), objectAt(after)).run();
}
