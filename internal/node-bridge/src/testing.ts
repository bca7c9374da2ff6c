import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeListener } from './index';

/**
 * The door harness: one list of cases, defined once per package, run over real HTTP against the
 * same behaviour served through each door (Hono, Express, Fastify, a bare Fetch handler). A door
 * that answers differently fails its case.
 */

export type DoorName = 'hono' | 'express' | 'fastify' | 'fetch';

/** A listening server: its base URL and how to stop it. */
export interface RunningDoor {
  readonly url: string;
  close(): Promise<void>;
}

export interface DoorRequest {
  readonly method?: string;
  /** Path and query; a function gets the JSON body of the case before (a cursor, an id). */
  readonly path: string | ((previous: unknown) => string);
  readonly headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (`content-type: application/json` unless given). */
  readonly body?: unknown;
}

export interface DoorExpectation {
  readonly status: number;
  /** The problem `code` of the body. */
  readonly code?: string;
  /** Exact values, patterns, or `null` for a header that must be absent. */
  readonly headers?: Record<string, string | RegExp | null>;
  /** Fields the JSON body must have (a subset match). */
  readonly body?: Record<string, unknown>;
  /** The exact body text. */
  readonly text?: string;
}

export interface DoorCase extends DoorRequest {
  readonly name: string;
  /** Requests sent first, their answers unchecked (to spend a limit, store a key). */
  readonly before?: readonly DoorRequest[];
  /**
   * Requests sent all at once after `before` (a race on one key); the statuses they get, in
   * any order, must be `statuses`.
   */
  readonly together?: { readonly requests: readonly DoorRequest[]; readonly statuses: readonly number[] };
  readonly expect: DoorExpectation;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listening(server: Server): Promise<RunningDoor> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return { url: urlOf(server), close: () => closeServer(server) };
}

/** A Hono app (or anything with `fetch`) on `@hono/node-server`, port 0. */
export function listenHono(app: {
  fetch: (request: Request) => Response | Promise<Response>;
}): Promise<RunningDoor> {
  return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
}

/** An Express app (any Node request listener), port 0. */
export function listenNode(listener: Parameters<typeof createServer>[1] & object): Promise<RunningDoor> {
  return listening(createServer(listener).listen(0, '127.0.0.1'));
}

/** A bare Fetch handler on `http.createServer` through the bridge, port 0. */
export function listenFetch(
  handler: (request: Request) => Response | Promise<Response>,
): Promise<RunningDoor> {
  return listenNode(nodeListener(handler));
}

/** A Fastify instance, port 0. */
export async function listenFastify(app: {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
}): Promise<RunningDoor> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    close: async () => {
      await app.close();
    },
  };
}

async function send(base: string, request: DoorRequest, previous: unknown): Promise<Response> {
  const path = typeof request.path === 'function' ? request.path(previous) : request.path;
  const headers = new Headers(request.headers);
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    if (typeof request.body !== 'string' && !headers.has('content-type')) {
      headers.set('content-type', 'application/json');
    }
  }
  return fetch(base + path, {
    method: request.method ?? 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs `cases` in order against every door, each door started once (`beforeAll`) and closed
 * after its cases. Each door's app is built fresh, so stateful cases (a limit spent, a key
 * stored) see the same state through every door.
 *
 * @example
 * ```ts
 * runDoorSuite('problem-details', cases, { hono: () => listenHono(app), ... });
 * ```
 */
export function runDoorSuite(
  title: string,
  cases: readonly DoorCase[],
  doors: Record<DoorName, () => Promise<RunningDoor>>,
): void {
  for (const [door, start] of Object.entries(doors) as [DoorName, () => Promise<RunningDoor>][]) {
    describe(`${title} through ${door}`, () => {
      let running: RunningDoor | undefined;
      let previous: unknown;
      beforeAll(async () => {
        running = await start();
      });
      afterAll(async () => {
        await running?.close();
      });
      for (const testCase of cases) {
        it(testCase.name, async () => {
          if (!running) throw new Error(`the ${door} door did not start`);
          for (const before of testCase.before ?? []) {
            const answer = await send(running.url, before, previous);
            previous = parse(await answer.text());
          }
          if (testCase.together) {
            const { url } = running;
            const answers = await Promise.all(
              testCase.together.requests.map((request) => send(url, request, previous)),
            );
            const texts = await Promise.all(answers.map((answer) => answer.text()));
            const statuses = answers.map((answer) => answer.status).sort((a, b) => a - b);
            const wanted = [...testCase.together.statuses].sort((a, b) => a - b);
            expect(statuses, `requests sent together: ${texts.join(' | ').slice(0, 300)}`).toEqual(wanted);
          }
          const response = await send(running.url, testCase, previous);
          const text = await response.text();
          const json = parse(text);
          const { status, code, headers = {}, body, text: exact } = testCase.expect;
          const summary = `${response.status} ${text.slice(0, 300)}`;
          expect(response.status, summary).toBe(status);
          if (code !== undefined) {
            expect(response.headers.get('content-type'), summary).toMatch(/^application\/problem\+json/);
            expect((json as { code?: unknown } | undefined)?.code, summary).toBe(code);
          }
          for (const [name, value] of Object.entries(headers)) {
            const actual = response.headers.get(name);
            if (value === null) expect(actual, `${name} ${summary}`).toBeNull();
            else if (typeof value === 'string') expect(actual, `${name} ${summary}`).toBe(value);
            else expect(actual, `${name} ${summary}`).toMatch(value);
          }
          if (body !== undefined) expect(json, summary).toMatchObject(body);
          if (exact !== undefined) expect(text).toBe(exact);
          previous = json;
        });
      }
    });
  }
}
