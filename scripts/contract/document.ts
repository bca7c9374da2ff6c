import { startServer } from '../../examples/reference-server/src/server';

/**
 * The OpenAPI document the reference server serves at `/openapi.json`, taken from a running
 * instance (embedded PGlite in memory, API role only, no workers), as JSON text with a final
 * newline: the exact bytes committed as `examples/reference-server/openapi/v1.json`.
 *
 * @example
 * ```ts
 * const text = await servedDocument();
 * ```
 */
export async function servedDocument(): Promise<string> {
  const server = await startServer({
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      DATABASE_URL: '',
      HOLDFAST_DATA_DIR: 'memory://',
      HOLDFAST_API_KEYS: '[]',
    },
    argv: ['--api-only'],
  });
  try {
    const response = await fetch(`${server.url}/openapi.json`);
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
    return `${JSON.stringify(await response.json(), null, 2)}\n`;
  } finally {
    await server.close();
  }
}
