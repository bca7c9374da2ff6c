import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { LoopDelay } from './loop-monitor';

// The largest hostile bodies the limits allow (1 MiB: jsonBody's maxBytes), for the event-loop
// test (hostile-bodies.test.ts) and bench/hostile: a server process with the loop monitor
// preloaded, and the bodies as bytes built once, so sending them costs the sender nothing.

const serverRoot = fileURLToPath(new URL('..', import.meta.url));
export const MiB = 1024 * 1024;
export const KEY = 'hf_test_hostileBodies00000000000000001';
export const API_KEYS = JSON.stringify([{ key: KEY, account: 'acct_hostile', scopes: ['*'] }]);

/** One request of a kind: what it is, where it goes, its bytes. */
export interface Shape {
  readonly name: string;
  readonly method: 'POST' | 'PATCH' | 'GET';
  readonly path: string;
  readonly body?: Buffer;
}

/** Fills `{"prefix":<items joined by commas>}` with `make(i)` until the next one would pass `bytes`. */
function fill(open: string, close: string, make: (i: number) => string, bytes = MiB): Buffer {
  const parts: string[] = [];
  let size = open.length + close.length;
  for (let i = 0; ; i += 1) {
    const part = make(i);
    if (size + Buffer.byteLength(part) + 1 > bytes) break;
    parts.push(part);
    size += Buffer.byteLength(part) + 1;
  }
  return Buffer.from(open + parts.join(',') + close);
}

const deep = (depth: number) => '['.repeat(depth) + '0' + ']'.repeat(depth);

/** The hostile shapes, each at most 1 MiB, and a normal order to compare with. */
export function shapes(orderId: string): Shape[] {
  const order = '"currency":"EUR","total":100,';
  return [
    {
      name: 'normal order',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(
        '{"currency":"EUR","total":4200,"description":"A normal order","metadata":{"reference":"A-1042"}}',
      ),
    },
    {
      name: '100,000+ unknown fields',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}`, '}', (i) => `"${i.toString(36)}":0`),
    },
    {
      name: 'about 990 unknown fields',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}`, '}', (i) => `"f${i}":0`, 999 * 8),
    },
    {
      name: 'metadata, 100,000+ keys',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}"metadata":{`, '}}', (i) => `"${i.toString(36)}":""`),
    },
    {
      name: 'metadata, 1,000 keys',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(
        `{${order}"metadata":{${Array.from({ length: 1000 }, (_, i) => `"k${i}":"v"`).join(',')}}}`,
      ),
    },
    {
      name: 'one 1 MiB field name',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(`{${order}"${'x'.repeat(MiB - 64)}":1}`),
    },
    {
      name: 'one 1 MiB metadata key',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(`{${order}"metadata":{"${'\u{1F600}'.repeat((MiB - 80) / 4)}":"v"}}`),
    },
    {
      name: 'nesting at the depth limit',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}"metadata":[`, ']}', () => deep(62)),
    },
    {
      name: 'nesting past the depth limit',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(`{"a":${'['.repeat(MiB / 2 - 16)}${']'.repeat(MiB / 2 - 16)}}`),
    },
    {
      name: 'long array of wrong items',
      method: 'POST',
      path: '/v1/webhook-endpoints',
      body: fill('{"url":"https://example.com/hook","eventTypes":[', ']}', () => '0'),
    },
    {
      name: 'long array, unknown field',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}"items":[`, ']}', (i) => String(i)),
    },
    {
      name: 'many NULs',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}"description":"`, '"}', () => '\\u0000'),
    },
    {
      name: 'many lone surrogates',
      method: 'POST',
      path: '/v1/orders',
      body: fill(`{${order}"notes":[`, ']}', () => '"\\ud800"'),
    },
    {
      name: 'lone surrogates, one string',
      method: 'POST',
      path: '/v1/orders',
      body: Buffer.from(`{${order}"description":"${'\\udc00'.repeat((MiB - 80) / 6)}"}`),
    },
    {
      name: 'about 990 fields on cancel',
      method: 'POST',
      path: `/v1/orders/${orderId}/cancel`,
      body: fill('{', '}', (i) => `"f${i}":0`, 999 * 8),
    },
    {
      name: '100,000+ fields on cancel',
      method: 'POST',
      path: `/v1/orders/${orderId}/cancel`,
      body: fill('{', '}', (i) => `"${i.toString(36)}":0`),
    },
    {
      name: 'query, 1,000 unknown parameters',
      method: 'GET',
      path: `/v1/orders/${orderId}?${Array.from({ length: 1000 }, (_, i) => `q${i}=1`).join('&')}`,
    },
  ];
}

/** A JSON answer as received: status and the raw text. */
export interface Received {
  readonly status: number;
  readonly text: string;
}

/** Sends one request of `shape` with the test key (and a fresh Idempotency-Key for a POST). */
export function send(base: string, shape: Shape): Promise<Received> {
  return new Promise((resolve, reject) => {
    const url = new URL(shape.path, base);
    const req = request(
      url,
      {
        method: shape.method,
        // A connection per request: a kept-alive socket the server times out can reset the next one.
        agent: false,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(shape.body ? { 'content-type': 'application/json', 'content-length': shape.body.length } : {}),
          ...(shape.method === 'GET' ? {} : { 'idempotency-key': randomUUID() }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(shape.body);
  });
}

/** A server process (`src/main.ts`, as `npm start` runs it) with the loop monitor preloaded. */
export interface MonitoredServer {
  readonly url: string;
  readonly output: string[];
  readonly child: ChildProcess;
  /** The event-loop delay since the last call (or the start), read from the process. */
  loopDelay(): Promise<LoopDelay>;
  stop(): Promise<void>;
}

export async function startMonitoredServer(env: Record<string, string>): Promise<MonitoredServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@holdfast/source', '--import', './test/loop-monitor.ts', 'src/main.ts'],
    {
      cwd: serverRoot,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output.join('')}`)), 150_000);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output.join(''));
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve(match[1]);
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${output.join('')}`));
    });
  });
  return {
    url,
    output,
    child,
    loopDelay: () =>
      new Promise((resolve) => {
        const onMessage = (message: unknown) => {
          if (typeof message !== 'object' || message === null || !('loopDelay' in message)) return;
          child.off('message', onMessage);
          resolve(message.loopDelay as LoopDelay);
        };
        child.on('message', onMessage);
        child.send('loop-delay');
      }),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
