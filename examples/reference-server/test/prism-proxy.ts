import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Stoplight Prism's validation proxy (issue 18): requests go through Prism to the server, and
// Prism checks each request and response against the document the server serves. A response
// that breaks its declaration comes back with an `sl-violations` header listing the violations.

const PRISM = fileURLToPath(new URL('../../../node_modules/.bin/prism', import.meta.url));

/** One violation as Prism reports it in `sl-violations`. */
export interface Violation {
  readonly location: readonly string[];
  readonly severity: string;
  readonly code?: string | number;
  readonly message: string;
}

/** A running Prism proxy in front of a server. */
export interface PrismProxy {
  /** `http://127.0.0.1:<port>`: send here instead of to the server. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Whether the tour runs through Prism: `HOLDFAST_PRISM=1` (as `.ci/run` sets). */
export const throughPrism: boolean = process.env.HOLDFAST_PRISM === '1';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `prism proxy` against the document `upstream` serves at `/openapi.json`, on a free
 * loopback port, and waits until it answers.
 *
 * @example
 * ```ts
 * const prism = await startPrismProxy(server.url);
 * await fetch(`${prism.url}/v1/orders`, { headers });
 * ```
 */
export async function startPrismProxy(upstream: string): Promise<PrismProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-prism-'));
  const document = join(dir, 'openapi.json');
  await writeFile(document, await (await fetch(`${upstream}/openapi.json`)).text());
  const port = await freePort();
  const child: ChildProcess = spawn(
    PRISM,
    [
      'proxy',
      document,
      upstream,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--errors',
      'false',
      '-v',
      'error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}: ${stderr}`);
    try {
      await fetch(`${url}/openapi.json`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`prism did not start within 60 s: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return {
    url,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The violations Prism attached to a response (none when the header is absent). */
export function violationsOf(headers: Headers): Violation[] {
  const header = headers.get('sl-violations');
  if (header === null) return [];
  const parsed: unknown = JSON.parse(header);
  return Array.isArray(parsed) ? parsed : [];
}
